"""The data stage: results/ -> build/data. Validation of the raw files (validate*.py), DuckDB tables brought
up to date per machine (aggregate.py runs the steps in order; its docstring names a module per step), the
facts files the pages quote, the claims' verdicts and the articles' short answers."""
