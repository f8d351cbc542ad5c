"""The poolers, one folder each: everything a pooler is to the project, found by scanning this package.

A folder (a Python package named like its kind, `-` written `_`) holds:
- `config.py`: its configuration as text, pure (no process, no database driver), ending in `CONFIG`, a
  `PoolerConfig` (connlab.contract.poolers.setup) that declares it: kind, label, program, version
  command, admin console, snippet lines. The data and site stages read it, never the adapter.
- `adapter.py`: the harness's `PoolerProcess` (connlab.lab.poolers.base states the contract), `ADAPTER`.
- optionally `snippet.sh.j2`: lines of its own for the check-it-yourself block (none needs one yet: the
  shared `site_src/partials/snippets/pooler.sh.j2` prints any pooler from its `CONFIG`).

The registries (connlab.contract.poolers.registry for the declarations, connlab.lab.poolers.registry for the
adapters) list this package's folders; nothing else names them. This module imports nothing, so that a
folder's modules import without loading the others; a folder imports the base modules it is written
against (connlab.contract.poolers.setup, connlab.lab.poolers.base), never a registry.
"""
