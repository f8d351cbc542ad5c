"""wait_events: what active client backends wait on. probe.py (its declaration and the cell's encoding),
sampler.py (the harness's), snippet.sh.j2 (the check-it-yourself partial)."""
