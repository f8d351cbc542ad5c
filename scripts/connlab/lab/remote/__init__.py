"""A PostgreSQL server the user names (`connlab run EXP --server URL --server-cores N`, and run-all,
contribute), measured from this host over TCP. Read it from the top down; each module imports only those
below it:

- `run`: the entry. It parses the options once into a `RemoteTarget`, checks the server, fits each plan to
  it, asks the user, and hands connlab.lab.sweep an opener of the named server's bench.
- `bench`: that bench: the poolers beside pgbench, the run's own database, everything removed at the end.
- `login`: the run's private folder, its password file, and the one login that finds the password.
- `plan`: which experiments and windows a named server can take, and what the run will ask of it.
- `server`: the server itself, as the harness uses a cluster (`RemoteServer`), and what SQL tells of it.
- `target`: what the command was told: the URL, parsed (`ServerUrl`), the stated cores, --keep.
"""
