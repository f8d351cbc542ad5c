"""The analysis the aggregation runs in Python: the Universal Scalability Law fitted per machine (usl.py,
fits.py, kept by their inputs between builds) and rows written back into DuckDB in bulk (bulk.py)."""
