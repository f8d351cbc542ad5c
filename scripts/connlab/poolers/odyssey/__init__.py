"""Odyssey (ODYSSEY_BIN, PATH, or built by `make odyssey`): config.py (its declaration and files),
adapter.py (the harness's process)."""
