"""The in-window probes, one folder each: everything a probe is to the project, found by scanning this
package.

A folder (a Python package named like the probe, the name experiment.yaml lists under `probes:`) holds:
- `probe.py`: its declaration, pure (no process, no database driver), ending in `PROBE`, a `Probe`
  (connlab.contract.probes.declaration): name, interval, the columns it fills (with their types and
  bounds, and the column they follow in a row), its query, one line for the methodology page. Every stage
  reads it.
- `sampler.py`: the harness's `ThreadedProbe` (connlab.lab.samplers.base states the contract), `SAMPLER`.
- optionally `snippet.sh.j2`: the check-it-yourself partial that runs one window with the probe beside
  pgbench (without one, a block runs pgbench alone for it); it sees `probe`, `pgbench`, `duration_s`,
  `pooler` and `target_database`.

The registries (connlab.contract.probes.registry for the declarations, connlab.lab.samplers.registry for the
samplers) list this package's folders; nothing else names them. This module imports nothing, so that a
folder's modules import without loading the others; a folder imports the base modules it is written
against (connlab.contract.probes.declaration, connlab.lab.samplers.base), never a registry.
"""
