"""pgcat (a binary named by PGCAT_BIN or on PATH): config.py (its declaration and files), adapter.py (the
harness's process)."""
