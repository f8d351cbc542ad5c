"""PgBouncer, one process (the Debian package): config.py (its declaration and files), adapter.py (the
harness's process)."""
