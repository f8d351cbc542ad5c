"""backends: the most client backends the server had during a window. probe.py (its declaration),
sampler.py (the harness's); no snippet (a block runs pgbench alone for it)."""
