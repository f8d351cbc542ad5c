"""memory_loaded: memory's figures read halfway through a window whose connections run queries. probe.py
(its declaration: memory's columns), sampler.py (the harness's, memory's with another moment),
snippet.sh.j2 (the check-it-yourself partial)."""
