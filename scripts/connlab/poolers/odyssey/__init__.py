"""Odyssey (ODYSSEY_BIN, PATH, or built by `make odyssey`): config.py (its declaration and files),
adapter.py (the harness's process), facts.py (main.odyssey_config, the data stage's: what its config writer
did for each machine's version)."""
