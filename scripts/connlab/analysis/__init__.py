"""The analysis the aggregation runs in Python: the Universal Scalability Law fitted per machine (usl.py,
fits.py, kept by their inputs between builds) from its one formula (connlab.contract.usl_formula, pure
arithmetic that the site's charts share, so in the contract every stage may import), and rows written back
into DuckDB in bulk (bulk.py)."""
