"""Connection Lab: experiments -> results/ -> build/data -> build/docs -> build/site, a package per stage.

lab/ measures (the harness: a throwaway PostgreSQL, pgbench, the poolers, one CSV row per window); data/
aggregates the raw rows with DuckDB into build/data (tables, facts, verdicts, answers); analysis/ fits the
Universal Scalability Law for it; site/ renders the pages and publishes the site. contract/ is what every
stage agrees on; poolers/ and probes/ hold one folder per pooler and per probe; cli.py is the `connlab`
command and paths.py names every path once.
"""
