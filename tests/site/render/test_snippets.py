"""The 'check it yourself' block: the harness's own flags, and a script that actually runs."""

from __future__ import annotations

import html
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from connlab.contract.experiment import Plan, experiment_names, make_plan, window_options
from connlab.contract.poolers.registry import CONFIGS
from connlab.contract.spec_parts import Workload
from connlab.site.render.snippets import BLOCK_ORIGIN, SNIPPET_PORT, pgbench_block
from support.host import cgroup_v1_writable

CLIENT_COUNTS = [1, 2]
# A shortened window lasts at least a second per this many of its clients (they connect in that time), and
# at least CROWD_S seconds from CROWD clients (PgPool-II's children each make a SCRAM login of their own).
CROWD, CROWD_S = 50, 5
# Every shortened window lasts at least this long: a window of the tiny profile's one second, on a busy
# 2-core machine, can close before two clients have logged in through a pooler.
MIN_WINDOW_S = 3
BLOCK_TIMEOUT_S = 300
# A crowd's logins (a SCRAM exchange and a backend's fork each) at this many a second on a busy 2-core
# machine: a window shorter than its clients' connecting finishes nothing.
CLIENTS_PER_WINDOW_SECOND = 10
# Blocks whose every crowd is the point: the refusal past max_connections and the pooler that serves the
# same crowd; clients past PgPool-II's children.
EVERY_CROWD = {"too-many-clients", "pooler-ceiling"}
PGBENCH_LINE = re.compile(
    r"taskset -c 1 pgbench (?:\$PG|-h \S+ -p \$\w+ -U \S+) (?P<flags>.*?) bench\w*(?: \\\n| >| 2>&1)"
)
EXPERIMENTS = [
    "clients-sweep", "connect-cost", "pgbouncer", "core-budget", "wait-events", "idle-memory", "sync-commit",
    "queue-depth", "client-bound", "pgbouncer-trade", "too-many-clients", "tls-trade", "pgbouncer-processes",
    "pooler-memory", "pooler-ceiling", "prepared-statements", "pooler-churn", "pooler-sustained",
    "pg-versions", "backend-memory",
]  # fmt: skip
# Boxes the site shows and this suite checks character for character, but does not run.
SHOWN_NOT_RUN: list[str] = []
# What each block prints per client count, by the kind of experiment.
RESULT_LINE = {
    "wait-events": r"clients: tps = [0-9.]+ .*; [0-9]+ samples:( \S+ [0-9]+%)*$",
    "idle-memory": r"idle connections, summed: RSS [0-9]+ MiB, PSS [0-9]+ MiB, RssAnon [0-9]+ MiB$",
    "backend-memory": (
        r"busy connections, per backend: RSS [0-9.]+ MiB, PSS [0-9.]+ MiB, RssAnon [0-9.]+ MiB$"
    ),
    "queue-depth": r"clients: tps = [0-9.]+ .*; clients waiting: mean [0-9.]+, most [0-9]+$",
    # The pooler's tree measured around pgbench; a failed window shows pgbench's error instead of a tps.
    # Past PgPool-II's children, a crowd whose window closes while most still wait processes nothing.
    "pooler-ceiling": (
        r"clients: (tps = [0-9.]+|pgbench: error|no transaction finished in the [0-9]+-s window: ).*"
        r"; pooler peak RSS [0-9]+ MiB in [1-9][0-9]* processes$"
    ),
    **dict.fromkeys(
        ["pooler-memory", "prepared-statements", "pooler-sustained"],
        r"clients: (tps = [0-9.]+|pgbench: error).*; pooler peak RSS [0-9]+ MiB in [1-9][0-9]* processes$",
    ),
    # Straight to the server the crowd is refused: pgbench's error is the line.
    "too-many-clients": (
        r"clients: (pgbench: error: .*too many clients already.*"
        r"|.*latency average = [0-9.]+ ms.*tps = [0-9.]+.*)"
    ),
}
DEFAULT_RESULT_LINE = r"clients: .*latency average = [0-9.]+ ms.*tps = [0-9.]+"


@pytest.fixture(params=EXPERIMENTS)
def plan(request: pytest.FixtureRequest) -> Plan:
    return make_plan(request.param, "tiny")


def block_flags(block: str) -> list[list[str]]:
    """The pgbench flags of each workload loop, as the shell will split them."""
    return [shlex.split(match["flags"]) for match in PGBENCH_LINE.finditer(block)]


def block_workloads(plan: Plan) -> list[Workload]:
    """The workloads a block runs: over several versions, one copy of each (the server PG_BINDIR names)."""
    first_major = plan.spec.server.versions[0] if plan.spec.server.versions else None
    return [w for w in plan.spec.workloads if w.postgres in (None, first_major)]


def test_block_uses_the_harness_flags(plan: Plan) -> None:
    block = pgbench_block(plan, client_counts=CLIENT_COUNTS)
    loops = block_flags(block)
    assert len(loops) == len(block_workloads(plan))
    assert f"for c in {' '.join(map(str, CLIENT_COUNTS))}; do" in block
    for workload, flags in zip(block_workloads(plan), loops, strict=True):
        for clients in CLIENT_COUNTS:
            jobs = min(clients, workload.jobs or 1)  # the block's `j=$(( c < J ? c : J ))`
            shell = [{"$c": str(clients), "$j": str(jobs)}.get(flag, flag) for flag in flags]
            harness = window_options(plan, workload, clients, jobs=1, script_dir="$DIR").flags()
            assert "-l" in harness
            assert shell == [flag for flag in harness if flag != "-l"], workload.id


@pytest.mark.process
@pytest.mark.parametrize("experiment", experiment_names())
def test_every_full_block_parses_as_bash(experiment: str) -> None:
    """`bash -n` on the block the page shows: a syntax error would stop it before its clean-up trap runs,
    leaving its server or poolers behind."""
    block = pgbench_block(make_plan(experiment, "full"))
    result = subprocess.run(["bash", "-n"], input=block, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_block_defaults_to_the_plan_client_counts(plan: Plan) -> None:
    block = pgbench_block(plan)
    assert f"for c in {' '.join(map(str, plan.client_counts))}; do" in block
    assert f"pgbench $PG -i -s {plan.scale} -q bench" in block


def test_block_starts_the_server_with_the_experiment_settings(plan: Plan) -> None:
    block = pgbench_block(plan)
    for key, value in plan.spec.server.settings.items():
        assert f"-c {key}={value}" in block
    assert f"PORT={SNIPPET_PORT}" in block
    assert "trap " in block and 'rm -rf "$DIR"' in block  # the cluster is always removed


# --------------------------------------------------------------------------- the blocks on the built pages

# A check-it-yourself box as Material builds it from `??? example "Check it yourself: ..."`.
BOX = re.compile(
    r'<details class="example">\s*<summary>Check it yourself: .*?</summary>(?P<body>.*?)</details>', re.S
)
CODE = re.compile(r"<pre[^>]*>(?:<span></span>)?<code[^>]*>(?P<code>.*?)</code></pre>", re.S)
ORIGIN = re.compile(
    "^# "
    + re.escape(BLOCK_ORIGIN)
    .replace(r"\{profile\}", r"(?P<profile>\w+)")
    .replace(r"\{experiment\}", r"(?P<experiment>[\w-]+)")
    + "$",
    re.M,
)
LOOP = re.compile(r"^(?P<indent> *)for c in (?P<counts>[0-9 ]+); do$", re.M)


def code_text(code_html: str) -> str:
    """What a reader copies from a block: its text without any tag, unescaped."""
    return html.unescape(re.sub(r"<[^>]+>", "", code_html))


@pytest.fixture(scope="module")
def site_blocks(built_site: Path) -> dict[str, str]:
    """experiment -> the script of its check-it-yourself box, as the built site shows it."""
    pages = sorted(built_site.rglob("index.html"))
    assert pages, f"no page in {built_site}"
    blocks: dict[str, str] = {}
    for page in pages:
        for box in BOX.finditer(page.read_text(encoding="utf-8")):
            codes = CODE.findall(box["body"])
            where = f"a check-it-yourself box on {page.relative_to(built_site)}"
            # A box whose script fell out of it (a line of its body not indented) holds no code at all.
            assert len(codes) == 1, f"{where} holds {len(codes)} code blocks, not its script"
            script = code_text(codes[0])
            origin = ORIGIN.search(script)
            assert origin, f"{where} does not name its experiment:\n{script[:200]}"
            assert origin["experiment"] not in blocks, f"two boxes for {origin['experiment']}"
            blocks[origin["experiment"]] = script
    return blocks


def test_every_experiment_has_a_box_on_the_site(site_blocks: dict[str, str]) -> None:
    assert sorted(site_blocks) == sorted(EXPERIMENTS + SHOWN_NOT_RUN)


def test_the_site_shows_the_generated_block(site_blocks: dict[str, str]) -> None:
    """The boxes show the generator's text exactly: no Markdown or HTML step altered a character."""
    for experiment, script in site_blocks.items():
        profile = ORIGIN.search(script)["profile"]  # type: ignore[index]
        assert script.rstrip("\n") == pgbench_block(make_plan(experiment, profile)), experiment


def shortened(script: str, experiment: str) -> tuple[str, list[list[int]]]:
    """The script a reader copied, made quick: the tiny profile's duration and scale, and at each loop
    the client counts up to 2. A loop with none that low keeps its smallest count where it is the block's
    first such crowd, or where the block's question is the crowd itself (EVERY_CROWD); later crowds run
    2 clients: one crowd per block shows the script serves one, and each costs seconds of SCRAM logins.
    Also returns each loop's client counts, in order. Every substitution must find its target, so a change
    to the block's shape fails here instead of silently running the full-length script."""
    tiny = make_plan(experiment, "tiny")
    duration, scale = tiny.profile.duration_s, tiny.scale
    replacements = [
        (r"pgbench \$PG -i -s [0-9]+ ", f"pgbench $PG -i -s {scale} ", True),
        (r"\| timeout [0-9]+ ", f"| timeout {duration} ", False),  # sampling as long as pgbench runs
        (r"\$\(seq [0-9]+\)", f"$(seq {duration * 10})", False),  # waits for the idle connections
    ]
    for pattern, replacement, always in replacements:
        script, found = re.subn(pattern, replacement, script)
        assert found or not always, f"{experiment}: no {pattern!r} in the block"
    loops: list[list[int]] = []

    def fewer(match: re.Match[str]) -> str:
        counts = [int(count) for count in match["counts"].split()]
        kept = [count for count in counts if count <= max(CLIENT_COUNTS)]
        if not kept:
            first_crowd = all(min(loop) <= max(CLIENT_COUNTS) for loop in loops)
            kept = counts[:1] if first_crowd or experiment in EVERY_CROWD else [max(CLIENT_COUNTS)]
        loops.append(kept)
        return f"{match['indent']}for c in {' '.join(map(str, kept))}; do"

    # Each window as long as its loop's crowd needs: hundreds of SCRAM handshakes through one pooler
    # process take seconds, and a window shorter than its clients' connecting measures nothing.
    lines, windows, window_s = [], 0, max(duration, MIN_WINDOW_S)
    for line in script.splitlines():
        loop = LOOP.match(line)
        if loop:
            line = fewer(loop)
            crowd = max(loops[-1])
            window_s = max(
                duration, MIN_WINDOW_S, crowd // CLIENTS_PER_WINDOW_SECOND, CROWD_S if crowd >= CROWD else 0
            )
        line, found = re.subn(r" -T [0-9]+ ", f" -T {window_s} ", line)
        windows += found
        # A probe that reads halfway through the window waits half of the shortened one.
        line = re.sub(r"sleep [0-9.]+(?=   # halfway through pgbench's -T)", f"sleep {window_s / 2}", line)
        lines.append(line)
    assert windows, f"{experiment}: no pgbench -T in the block"
    return "\n".join(lines), loops


def run_as_a_reader_would(command: list[str], cwd: Path, timeout_s: int) -> subprocess.CompletedProcess[str]:
    """Run a block in a session of its own. One that overruns gets Ctrl-C's SIGINT and then SIGTERM, as a
    reader at a terminal would send, so its clean-up trap stops its server and poolers before the suite
    moves on (a killed bash runs no trap, and what it left would hold the next block's ports)."""
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        for signal_number in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            os.killpg(process.pid, signal_number)
            try:
                process.communicate(timeout=20)
                break
            except subprocess.TimeoutExpired:
                continue
        pytest.fail(f"the block ran past {timeout_s} s and was interrupted")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


# Every block runs its server on SNIPPET_PORT, its poolers from POOLER_PORT on, in cgroups named
# connlab-check: the names a reader copies, the same in every block. The test gives each block free ports and
# a cgroup name of its own, as a reader whose port is taken would edit the script, so that blocks run beside
# each other (pytest-xdist workers, two test runs on one machine) and beside connlab's own runs.
CGROUP_NAME = "connlab-check"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def on_ports_of_its_own(script: str, cgroup: str) -> tuple[str, list[int]]:
    """The script with free ports for its server and poolers and the cgroup name given; the ports."""
    ports: list[int] = []

    def port(match: re.Match[str]) -> str:
        ports.append(free_port())
        return f"{match['name']}={ports[-1]}"

    script, found = re.subn(r"^(?P<name>PORT|POOLER_PORT(?:_[0-9]+)?)=[0-9]+$", port, script, flags=re.M)
    assert found and script.count(CGROUP_NAME) in (0, 2), "the block's port or cgroup lines changed shape"
    return script.replace(CGROUP_NAME, cgroup), ports


@pytest.mark.e2e
@pytest.mark.usefixtures("require_root", "require_postgres")
def test_block_runs(plan: Plan, site_blocks: dict[str, str], shared_tmp: Path) -> None:
    """The script of each box, copied from the built page, shortened, runs and prints a line per point."""
    block, loops = shortened(site_blocks[plan.experiment], plan.experiment)
    cgroup = f"{CGROUP_NAME}-{shared_tmp.name}"
    block, ports = on_ports_of_its_own(block, cgroup)
    workloads = block_workloads(plan)
    assert len(loops) == len(workloads), "one loop per workload"
    script = shared_tmp / "check.sh"
    script.write_text(block + "\n")
    script.chmod(0o644)
    quotas = len(plan.spec.server.budget_shares)
    needs_cgroups = quotas > 1 or any(w.client_cpu_share for w in plan.spec.workloads)
    if needs_cgroups and not cgroup_v1_writable():
        pytest.skip("the CPU-quota block needs root and a writable cgroup hierarchy")
    # A block with CPU quotas runs as root (cgroups) and starts the server as postgres itself.
    user = [] if needs_cgroups else ["runuser", "-u", "postgres", "--"]
    result = run_as_a_reader_would([*user, "bash", str(script)], cwd=shared_tmp, timeout_s=BLOCK_TIMEOUT_S)
    assert result.returncode == 0, result.stdout + result.stderr
    sections = re.split(r"^== ", result.stdout, flags=re.M)[1:]
    labels = [w.label.removesuffix(f", PostgreSQL {w.postgres}") for w in workloads for _ in range(quotas)]
    assert [section.splitlines()[0].split(", server quota")[0] for section in sections] == labels
    targets = [w.target for w in workloads for _ in range(quotas)]
    for counts, section, target in zip(
        [c for c in loops for _ in range(quotas)], sections, targets, strict=True
    ):
        lines = section.splitlines()[1:]
        if lines == [f"{target}: not running here (see above why)"]:
            # Said plainly, and only where the pooler's program is missing or refused to start.
            pooler = next(p for p in plan.spec.poolers if p.instance == target)
            missing = (
                f"{target}: not available on this machine ({CONFIGS[pooler.kind].binary} is not installed)"
            )
            if missing in result.stderr:
                assert shutil.which(CONFIGS[pooler.kind].binary) is None
            else:
                assert f"{target}: did not start here" in result.stderr, result.stderr
            continue
        assert len(lines) == len(counts), section
        for clients, line in zip(counts, lines, strict=True):
            pattern = rf"^\s*{clients} " + RESULT_LINE.get(plan.experiment, DEFAULT_RESULT_LINE)
            if "new connection" in section:
                assert "average connection time" in line, line
            assert re.search(pattern, line), line
    if plan.experiment == "too-many-clients":
        # The refusal is the result: printed straight to the server, absent through the pooler.
        direct, pooled = sections
        assert "sorry, too many clients already" in direct, direct
        assert "too many clients" not in pooled and re.search(r"tps = [0-9.]+", pooled), pooled
    # The script cleans up after itself: no server or pooler is left on its port, no cgroup behind.
    assert len(ports) == 1 + len(plan.spec.poolers)
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0, f"something still listens on port {port}"
    leftovers = [f"/sys/fs/cgroup/{v1}{cgroup}{c}" for v1 in ("cpu/", "") for c in ("", "-client")]
    assert not any(Path(p).exists() for p in leftovers)


@pytest.mark.process
@pytest.mark.parametrize(
    ("golden", "line"),
    [
        # Every login outlasted -T: pgbench's bare count of 0 becomes a sentence with what to change.
        (
            "connecting_past_window_c2",
            "no transaction finished in the 1-s window: its clients were still connecting or waiting;"
            " raise -T ",
        ),
        ("select_only_c4", "tps = 56739.384795 (without initial connection time) "),
        ("too_many_clients_c30", "pgbench: error: connection to server on socket"),
    ],
)
def test_a_windows_line_says_its_figure_its_first_error_or_why_it_has_none(
    golden_dir: Path, golden: str, line: str
) -> None:
    """The block's summary of a window, fed real pgbench outputs."""
    block = pgbench_block(make_plan("pooler-memory", "quick"))
    summary = re.search(r"^summary\(\) \{.*?^\}$", block, re.M | re.S)
    assert summary, "the block defines no summary function"
    output = (golden_dir / f"{golden}.txt").read_text()
    result = subprocess.run(
        ["bash", "-c", f"{summary[0]}\nsummary '^tps'"],
        input=output,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.startswith(line), result.stdout
    assert result.stdout.count("pgbench: error") <= 1, "one error, not one per client"


def test_a_tls_block_makes_its_certificate_and_says_each_windows_sslmode() -> None:
    plan = make_plan("tls-trade", "tiny")
    block = pgbench_block(plan)
    assert "openssl req -x509" in block and "-c ssl=True" in block
    assert "client_tls_sslmode = allow" in block  # the pooler serves plain and TLS windows alike
    modes = re.findall(r"PGSSLMODE=(\w+) .*pgbench .* -T", block)
    assert modes == ["require" if w.tls else "disable" for w in plan.spec.workloads]
    assert "PGSSLMODE" not in pgbench_block(make_plan("pgbouncer", "tiny"))


def test_a_block_over_several_versions_runs_each_workload_once_on_one_server() -> None:
    """The block runs the server PG_BINDIR names: one copy of each workload, labelled with no version."""
    plan = make_plan("pg-versions", "full")
    block = pgbench_block(plan)
    headers = [line for line in block.splitlines() if line.startswith("echo '== ")]
    assert len(headers) == len({w.id.rsplit("-pg", 1)[0] for w in plan.spec.workloads})
    assert not any("PostgreSQL" in header for header in headers)
