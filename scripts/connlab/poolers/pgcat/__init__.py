"""pgcat (PGCAT_BIN, PATH, or installed by `make poolers`): config.py (its declaration and files), adapter.py
(the harness's process)."""
