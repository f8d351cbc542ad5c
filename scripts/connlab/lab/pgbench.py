"""pgbench: the command line the harness runs, and the parser for what pgbench 15 prints.

The parser reads pgbench's final report, not its progress lines, and keeps errors such as
"FATAL: sorry, too many clients already" because a failed window is itself a result.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from connlab.contract.pgbench_options import PgbenchOptions

# Exit codes documented by pgbench: 0 success, 1 invalid options or setup failure, 2 errors during the run.
EXIT_OK = 0


def build_command(
    pgbench: str,
    options: PgbenchOptions,
    connection: Sequence[str],
    dbname: str,
    log_prefix: Path | None = None,
) -> list[str]:
    flags = options.flags()
    if options.transaction_log and log_prefix is None:
        # Without a folder for it, pgbench would write its transaction log into the working directory (a
        # reader's clone, the repository under test): no folder, no log, and no percentiles.
        flags = [flag for flag in flags if flag != "-l"]
    command = [pgbench, *connection, *flags]
    if options.transaction_log and log_prefix is not None:
        command += ["--log-prefix", str(log_prefix)]
    return [*command, dbname]


NO_TRANSACTION = "no transaction completed in the window (connecting its clients took the whole window?)"


@dataclass
class PgbenchReport:
    """What one pgbench run reported; None where pgbench did not print the figure."""

    exit_code: int
    tps: float | None = None
    transactions: int | None = None
    failed_transactions: int | None = None
    latency_avg_ms: float | None = None
    latency_stddev_ms: float | None = None
    initial_connection_ms: float | None = None
    avg_connection_ms: float | None = None
    aborted: bool = False
    errors: list[str] = field(default_factory=list)
    # "could not create connection for client N": clients are numbered from 0, so N is how many had
    # connected before the server refused one (in order only with -j 1: one thread connects them all).
    refused_client: int | None = None

    @property
    def ok(self) -> bool:
        """A window counts only when pgbench exited 0, finished its run, no transaction failed, and it
        logged no error: pgbench 15 logs a failed PREPARE (through a pooler that does not track prepared
        statements: "already exists") and carries on, exiting 0."""
        return (
            self.exit_code == EXIT_OK
            and not self.errors
            and not self.aborted
            and self.tps is not None
            and not self.failed_transactions
        )

    def clients_connected(self, clients: int) -> int | None:
        """All the window's clients once pgbench got to run; how many the server took before it refused
        one; None when pgbench failed before its run for another reason."""
        if self.refused_client is not None:
            return self.refused_client
        return clients if self.tps is not None else None

    @property
    def error(self) -> str:
        if self.errors:
            return self.errors[0]
        if self.aborted:
            return "run was aborted; the results are incomplete"
        if self.failed_transactions:
            return f"{self.failed_transactions} failed transactions"
        if self.exit_code != EXIT_OK:
            return f"pgbench exited with status {self.exit_code}"
        if self.tps is None:
            # pgbench's clock runs while its clients connect: a crowd slower to connect than the window
            # leaves it no time for a transaction, and pgbench prints no throughput at all.
            return NO_TRANSACTION
        return ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
_PATTERNS: dict[str, re.Pattern[str]] = {
    "transactions": re.compile(r"^number of transactions actually processed: ([0-9]+)", re.M),
    "failed_transactions": re.compile(r"^number of failed transactions: ([0-9]+)", re.M),
    "latency_avg_ms": re.compile(rf"^latency average = {_NUMBER} ms", re.M),
    "latency_stddev_ms": re.compile(rf"^latency stddev = {_NUMBER} ms", re.M),
    "initial_connection_ms": re.compile(rf"^initial connection time = {_NUMBER} ms", re.M),
    "avg_connection_ms": re.compile(rf"^average connection time = {_NUMBER} ms", re.M),
    # With -C pgbench 15 prints "tps = X (including reconnection times)", without it
    # "tps = X (without initial connection time)"; both are the figure we want.
    "tps": re.compile(
        rf"^tps = {_NUMBER} \((?:without initial connection time|including reconnection times)\)", re.M
    ),
}
_ERROR_LINE = re.compile(r"(FATAL|ERROR|could not|Cannot assign|connection to server|pgbench: error)", re.I)
_ABORTED = "Run was aborted; the above results are incomplete"
_REFUSED_CLIENT = re.compile(r"could not create connection for client ([0-9]+)")
# libpq 15: `connection to server on socket "/path/.s.PGSQL.5432" failed: ` or
# `connection to server at "127.0.0.1", port 5432 failed: `; machine-specific, so dropped.
_CONNECTION_PREFIX = re.compile(
    r'connection to server (?:on socket "[^"]*"|at "[^"]*"(?: \([^)]*\))?, port [0-9]+) failed: '
)


def parse_report(output: str, exit_code: int) -> PgbenchReport:
    """Parse pgbench's combined stdout and stderr."""
    report = PgbenchReport(exit_code=exit_code)
    for name, pattern in _PATTERNS.items():
        match = pattern.search(output)
        if match:
            value = match.group(1)
            setattr(
                report, name, int(value) if name in ("transactions", "failed_transactions") else float(value)
            )
    report.aborted = _ABORTED in output
    refused = _REFUSED_CLIENT.search(output)
    report.refused_client = int(refused.group(1)) if refused else None
    if report.failed_transactions is None and exit_code == EXIT_OK and not report.aborted and report.tps:
        # pgbench 14 prints no failed-transactions line: a failed transaction aborted its client (exit 2),
        # so a clean, complete run had none.
        report.failed_transactions = 0
    seen: set[str] = set()
    for line in output.splitlines():
        if line.startswith("progress:") or not _ERROR_LINE.search(line):
            continue
        message = _clean_error(line)
        if message not in seen:
            seen.add(message)
            report.errors.append(message)
    return report


def _clean_error(line: str) -> str:
    """Drop the per-client prefix so one error repeated by 400 clients is reported once."""
    line = re.sub(r"^pgbench: error: ", "", line.strip())
    line = re.sub(r"^client [0-9]+ (aborted in command [0-9]+ \([^)]*\) of script [0-9]+; )?", "", line)
    line = re.sub(
        r'connection to server (?:on socket "[^"]*"|at "[^"]*"(?: \([^)]*\))?, port [0-9]+) failed: ',
        "",
        line,
    )
    return line.strip()


def read_transaction_latencies_us(log_files: Iterable[Path]) -> list[int]:
    """Per-transaction latencies from pgbench -l files (`client tx time_us script epoch epoch_us`)."""
    latencies: list[int] = []
    for path in log_files:
        with path.open() as log:
            for line in log:
                parts = line.split(maxsplit=3)
                # Skipped or failed transactions carry a word instead of a time; they have no latency.
                if len(parts) >= 3 and parts[2].isdigit():
                    latencies.append(int(parts[2]))
    return latencies


def percentile(sorted_values: Sequence[int], share: float) -> float:
    """Nearest-rank percentile: a value that was actually measured, never an interpolation."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(share * len(sorted_values)))
    return float(sorted_values[rank - 1])


def latency_percentiles_ms(log_files: Iterable[Path]) -> dict[str, float | None]:
    values = sorted(read_transaction_latencies_us(log_files))
    if not values:
        return {"latency_p50_ms": None, "latency_p95_ms": None, "latency_p99_ms": None}
    return {
        f"latency_p{int(share * 100)}_ms": percentile(values, share) / 1000 for share in (0.50, 0.95, 0.99)
    }
