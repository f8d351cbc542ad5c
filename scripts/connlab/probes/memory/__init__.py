"""memory: the server's memory with every connection of the window idle. probe.py (its declaration, whose
columns memory_loaded fills too), sampler.py (the harness's), snippet.sh.j2 (the check-it-yourself
partial)."""
