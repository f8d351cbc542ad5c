"""pooler_memory: RSS, PSS and process count of the pooler's whole process tree. probe.py (its declaration
and the series cell's encoding), sampler.py (the harness's), snippet.sh.j2 (the check-it-yourself
partial)."""
