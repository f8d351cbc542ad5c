"""The contract: what every stage of the project agrees on, importable by all and importing none.

The stages are the harness (`connlab.lab`, experiments -> results/), the data (`connlab.data` and
`connlab.analysis`, results/ -> build/data) and the site (`connlab.site`, build/data -> build/docs). Each
imports only this package (with `connlab.paths` and `connlab.errors`, which import nothing of the project)
and its own modules; what a later stage needs to know of an earlier one is either declared here or read
from build/data. tests/test_contract.py holds every stage to that.

- `names`: shared names and numbers (the benchmark database, the CFS period, published folders' prefix).
- `experiment`: the experiment spec (experiments/<name>/experiment.yaml) and its expansion into windows.
- `pgbench_options`: pgbench's flags for one window, pure.
- `columns`: the results CSV's columns, each with its own constraints.
- `probes`: each in-window probe's name, interval and columns.
- `machine_schema`, `yaml_models`: machine.yaml and strict YAML loading.
- `files`: writing a file only when its text changes.
"""
