"""pgbench's flags for one window, pure: the harness's command and the site's snippets are one list."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PgbenchOptions:
    """The flags of one pgbench window; the same object builds the harness command and the snippets."""

    builtins: tuple[str, ...]  # e.g. ("select-only@9", "simple-update@1")
    clients: int
    jobs: int
    duration_s: int
    connect_per_transaction: bool = False
    protocol: str = "simple"
    progress_s: int = 1  # -P 1 is always on: it is what makes pgbench report latency stddev
    transaction_log: bool = True
    extra: tuple[str, ...] = ()
    # A custom script instead of builtins; it may use :window_s, the window's length in seconds.
    script_path: str | None = None

    def flags(self, shell_variables: bool = False) -> list[str]:
        """pgbench's flags; with shell_variables, -c and -j read $c and $j (for loops in snippets)."""
        clients = "$c" if shell_variables else str(self.clients)
        jobs = "$j" if shell_variables else str(min(self.jobs, self.clients))
        flags = ["-n"]  # never vacuum: the harness prewarms and checkpoints itself
        for builtin in self.builtins:
            flags += ["-b", builtin]
        if self.script_path is not None:
            flags += ["-f", self.script_path, "-D", f"window_s={self.duration_s}"]
        flags += [
            "-c",
            clients,
            "-j",
            jobs,
            "-T",
            str(self.duration_s),
            "-P",
            str(self.progress_s),
            "-M",
            self.protocol,
        ]
        if self.connect_per_transaction:
            flags.append("-C")
        if self.transaction_log:
            flags.append("-l")
        return flags + list(self.extra)
