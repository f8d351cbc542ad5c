"""PgBouncer as two processes sharing one port (so_reuseport): config.py (its declaration and files),
adapter.py (the harness's process).

A variant, yet a kind of its own: its own files, start line, adapter and rows (`target: pgbouncer-pair`).
It builds on the pgbouncer folder (its config and adapter) and runs PgBouncer's program, so it records no
version of its own (pgbouncer_version is its version).
"""
