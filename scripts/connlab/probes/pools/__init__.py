"""pools: clients waiting in the window's pool, from the pooler's SHOW POOLS. probe.py (its declaration),
sampler.py (the harness's), snippet.sh.j2 (the check-it-yourself partial)."""
