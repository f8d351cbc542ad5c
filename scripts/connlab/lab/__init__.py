"""The harness: measuring one machine into results/<machine>/. The machine's id and fingerprint (machine.py,
calibration.py), the throwaway cluster (cluster.py), CPU budgets (cpu_budget.py), pgbench and its windows
(pgbench.py, window.py, sweep.py), the poolers' processes (poolers/) and the in-window samplers (samplers/),
results written atomically (results_file.py), one measurement at a time (run_lock.py), and a remote server
measured over the network (remote/)."""
