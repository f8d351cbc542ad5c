"""Names do not rot: every file, module and build/ folder that the docs and the comments name exists.

Read: the docstrings and comments of the Python under scripts/ and tests/, the comments of the Makefile,
pyproject.toml, the workflows and the shell and node scripts, the Markdown (README.md, ARCHITECTURE.md,
CONTRIBUTING.md, docs/*.md, site_src/**/*.md*), mkdocs.yml and site_src/assets/charts.js. Recognised,
and held to:

- a path from one of the repository's folders (scripts/..., tests/..., site_src/..., experiments/...,
  results/..., docs/..., .ci/..., .github/...): it exists. A segment with a placeholder (`<exp>`,
  `{key}`, `*`) matches any name.
- a path under build/ (generated, so nothing to look at): its first folder is one the code makes
  (connlab.paths, the stamped sources beside build/docs, the Makefile's $(BUILD)/<name>), and every later
  segment is a name the code writes (it appears in the code's string literals or the Makefile's rules).
- a file of code named without its folder or with part of it (`render/fragments.py`, `sampler.py`,
  `aggregate.sql`, `snippet.sh.j2`): some file of the repository ends so.
- a dotted module path beginning with `connlab.` (`connlab.site.render.views`,
  `connlab.lab.poolers.registry.POOLERS`), or with one of its rooms outside templates and scripts
  (`render.renderer`, `lab.sweep`): its longest prefix that is a module exists, and every name after it
  appears in that module's text.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from connlab import paths
from connlab.contract.poolers.registry import CONFIGS
from connlab.site import layout

REPO = paths.REPO_ROOT
PACKAGE = REPO / "scripts" / "connlab"
SKIP_DIRS = {".git", ".venv", "node_modules", "build", "__pycache__", ".pytest_cache", ".ruff_cache"}
ROOTS = ("scripts", "tests", "site_src", "experiments", "results", "docs", ".ci", ".github")
CODE_SUFFIXES = (".py", ".mjs", ".sql", ".sh", ".j2")
# A path-like run of characters, not inside a longer path, an absolute path or a URL.
TOKEN = re.compile(r"(?<![\w/.$~:-])[\w.<>{}*-]+(?:/[\w.<>{}*-]*)*")
PLACEHOLDER = re.compile(r"[<>{}*]")
COMMENT = re.compile(r"(?:^[ \t]*#|  # )(.*)$", flags=re.M)
LITERAL = re.compile(r"(?<![\"'])[\"']([^\"'\n]+)[\"'](?![\"'])")
# connlab.css and connlab.duckdb are files, not modules (and charts.js no attribute of connlab.site.charts).
FILE_NAMES = {"css", "duckdb", "js", "json", "yaml", "yml", "md", "html", "py", "sql", "lock", "csv", "svg",
              "toml"}  # fmt: skip


def repo_files() -> Iterator[Path]:
    stack = [REPO]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                if entry.name not in SKIP_DIRS:
                    stack.append(entry)
            elif entry.is_file():
                yield entry


@cache
def all_paths() -> tuple[frozenset[str], frozenset[str]]:
    """Every file's and every folder's path relative to the repository, POSIX-style."""
    files = {path.relative_to(REPO).as_posix() for path in repo_files()}
    folders = {parent for name in files for parent in _parents(name)}
    return frozenset(files), frozenset(folders)


def _parents(name: str) -> Iterator[str]:
    parts = name.split("/")
    for end in range(1, len(parts)):
        yield "/".join(parts[:end])


def python_prose(path: Path) -> str:
    """A Python file's comments (whole lines, and after code as `  # `) and docstrings. Not tokenize: on every
    file of the repository it took seconds."""
    source = path.read_text()
    pieces = [match.group(1) for match in COMMENT.finditer(source)]
    statements: list[ast.AST] = [ast.parse(source)]
    while statements:
        node = statements.pop()
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                pieces.append(docstring)
        for field in ("body", "orelse", "finalbody", "handlers"):
            statements.extend(child for child in getattr(node, field, []) if isinstance(child, ast.AST))
    return "\n".join(pieces)


def python_literals(path: Path) -> str:
    """A Python file's one-line string literals: the names its code writes (docstrings span lines)."""
    return "\n".join(LITERAL.findall(path.read_text()))


def hash_comments(text: str) -> str:
    """The comments of a Makefile or shell script (whole-line and trailing `# ...`)."""
    return "\n".join(match.group(1) for match in re.finditer(r"(?:^|\s)#(.*)$", text, flags=re.M))


def hash_code(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def slash_comments(text: str) -> str:
    """The comments of a JavaScript file (`// ...` and `/* ... */`)."""
    found = re.findall(r"//(.*)$|/\*(.*?)\*/", text, flags=re.M | re.S)
    return "\n".join(line or block for line, block in found)


def prose_sources() -> Iterator[tuple[str, str]]:
    """(where, text) for everything whose names are checked."""
    for path in sorted([*(REPO / "scripts").rglob("*.py"), *(REPO / "tests").glob("**/*.py")]):
        if not SKIP_DIRS.intersection(path.relative_to(REPO).parts):
            yield path.relative_to(REPO).as_posix(), python_prose(path)
    yield "Makefile", hash_comments((REPO / "Makefile").read_text())
    hashed = [*(REPO / "scripts").rglob("*.sh"), REPO / ".ci" / "run", REPO / "pyproject.toml"]
    for path in sorted([*hashed, *(REPO / ".github" / "workflows").glob("*.yml")]):
        yield path.relative_to(REPO).as_posix(), hash_comments(path.read_text())
    for path in sorted((REPO / "scripts").rglob("*.mjs")):
        yield path.relative_to(REPO).as_posix(), slash_comments(path.read_text())
    markdown = [REPO / "README.md", REPO / "ARCHITECTURE.md", REPO / "CONTRIBUTING.md"]
    markdown += sorted((REPO / "docs").glob("*.md")) + sorted((REPO / "site_src").rglob("*.md*"))
    for path in [*markdown, REPO / "mkdocs.yml", REPO / "site_src" / "assets" / "charts.js"]:
        if path.exists():
            yield path.relative_to(REPO).as_posix(), path.read_text()


@cache
def code_text() -> str:
    """What the code itself names: its string literals, the Makefile's rules and the scripts' commands."""
    pieces = [python_literals(path) for path in (REPO / "scripts").rglob("*.py")]
    pieces.append(hash_code((REPO / "Makefile").read_text()))
    pieces += [hash_code(path.read_text()) for path in (REPO / "scripts").rglob("*.sh")]
    return "\n".join(pieces)


@cache
def build_folders() -> frozenset[str]:
    """The folders directly under build/ that the code makes."""
    names = set()
    for value in vars(paths).values():
        if isinstance(value, Path):
            for base in (paths.BUILD_DIR, paths.DEFAULT_BUILD_DIR):
                if value.is_relative_to(base) and value != base:
                    names.add(value.relative_to(base).parts[0])
    names.add(layout.stamped_sources(paths.DOCS_DIR).name)
    names.update(re.findall(r"\$\(BUILD\)/([\w.-]+)", (REPO / "Makefile").read_text()))
    # Where `make poolers` installs a pooler's program (connlab.paths.built_pooler_bin: build/<program>).
    names.update(paths.built_pooler_bin(config.binary).relative_to(paths.DEFAULT_BUILD_DIR).parts[0]
                 for config in CONFIGS.values())  # fmt: skip
    return frozenset(names)


def is_build_folder(name: str) -> bool:
    """One of build_folders(), one that a Makefile name ending in `-` starts (`.setting-<VARIABLE>`), or a
    pooler's build staged by `make poolers` (connlab.paths.staged_pooler_bin_dir: <program>-<version>)."""
    if name in build_folders() or re.fullmatch(r"[a-z]+-\d[\d.]*", name):
        return True
    return any(folder.endswith("-") and name.startswith(folder) for folder in build_folders())


def segment_pattern(segment: str) -> str:
    return "[^/]+" if PLACEHOLDER.search(segment) else re.escape(segment)


def matches(pattern_parts: list[str], candidates: frozenset[str], anchored: bool) -> bool:
    pattern = "/".join(segment_pattern(part) for part in pattern_parts)
    regex = re.compile(("^" if anchored else "(?:^|/)") + pattern + "$")
    return any(regex.search(candidate) for candidate in candidates)


def root_path_problem(token: str) -> str | None:
    folder = token.endswith("/")
    parts = [part for part in token.split("/") if part]
    files, folders = all_paths()
    if not any(PLACEHOLDER.search(part) for part in parts):
        path = REPO / "/".join(parts)
        if path.is_dir() or (not folder and path.is_file()):
            return None
        return "does not exist"
    candidates = folders if folder else files | folders
    return None if matches(parts, candidates, anchored=True) else "matches nothing"


def build_path_problem(token: str) -> str | None:
    parts = [part for part in token.split("/") if part][1:]
    if not parts or PLACEHOLDER.search(parts[0]):
        return None
    if not is_build_folder(parts[0]):
        return (
            f"build/{parts[0]} is not a folder the code makes (it makes {', '.join(sorted(build_folders()))})"
        )
    for part in parts[1:]:
        if not PLACEHOLDER.search(part) and part not in code_text():
            return f"the code writes no {part!r}"
    return None


def code_file_problem(token: str) -> str | None:
    files, _ = all_paths()
    parts = [part for part in token.split("/") if part]
    if not PLACEHOLDER.search(parts[-1]):
        files = frozenset(name for name in files if name.rsplit("/", 1)[-1] == parts[-1])
    return None if matches(parts, files, anchored=False) else "no file of the repository ends so"


def module_file(parts: list[str]) -> Path | None:
    base = REPO / "scripts" / Path(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


@cache
def rooms() -> dict[str, tuple[str, ...]]:
    """The packages a module is often named from without `connlab.` (`render.renderer`, `lab.sweep`): the
    stages' packages and the site's and the harness's rooms, by their last name. Not a pooler's or a probe's
    folder, whose names are also those of their files (`pgbouncer.ini`, `memory.stat`)."""
    found = {}
    for init in [
        *PACKAGE.glob("*/__init__.py"),
        *PACKAGE.glob("site/*/__init__.py"),
        *PACKAGE.glob("lab/*/__init__.py"),
    ]:
        parts = init.parent.relative_to(REPO / "scripts").parts
        found[parts[-1]] = parts
    return found


def module_problem(token: str) -> str | None:
    parts = token.split(".")
    if parts[0] != "connlab":
        parts = [*rooms()[parts[0]], *parts[1:]]
    for end in range(len(parts), 0, -1):
        found = module_file(parts[:end])
        if found is not None:
            text = found.read_text()
            missing = [
                name
                for name in parts[end:]
                if not PLACEHOLDER.search(name)
                and not re.fullmatch(r"__\w+__", name)
                and not re.search(rf"\b{re.escape(name)}\b", text)
            ]
            if missing:
                return f"{'.'.join(parts[:end])} defines no {missing[0]}"
            return None
    return "no such module"


def problem(token: str, relative_modules: bool = True) -> str | None:
    """Why token names nothing, or None. relative_modules: a dotted name may start at one of rooms() (not in
    a template or a script, where such a name is a variable of its own)."""
    root = token.split("/", 1)[0]
    if "/" in token and root == "build":
        return build_path_problem(token)
    if "/" in token and root in ROOTS:
        return root_path_problem(token)
    dotted = token.split(".")
    if (
        "/" not in token
        and len(dotted) > 1
        and dotted[-1] not in FILE_NAMES
        and (dotted[0] == "connlab" or (relative_modules and dotted[0] in rooms()))
    ):
        return module_problem(token)
    if token.endswith(CODE_SUFFIXES):
        return code_file_problem(token)
    return None


def named_paths(text: str) -> Iterator[str]:
    for match in TOKEN.finditer(text):
        token = match.group(0).rstrip(".")
        if token and (not token.startswith(".") or token.startswith((".ci/", ".github/"))):
            yield token


def test_every_named_path_exists() -> None:
    stale: list[str] = []
    for where, text in prose_sources():
        for token in sorted(set(named_paths(text))):
            if where.startswith("tests/") and token.startswith("results/"):
                continue  # the tests' own results folders, made in a temporary folder
            reason = problem(token, relative_modules=not where.endswith((".j2", ".js")))
            if reason is not None:
                stale.append(f"{where}: {token}: {reason}")
    assert stale == [], "names of things that do not exist:\n" + "\n".join(stale)


def test_the_check_finds_a_stale_name() -> None:
    assert problem("scripts/connlab/site/charts/chart_html.py") is not None
    assert problem("chart_html.py") is not None
    assert problem("connlab.site.publish.nothing_here") is not None
    assert problem("connlab.lab.poolers.NOT_DEFINED_ANYWHERE") is not None
    assert problem("build/machine-pages") is not None
    assert problem("experiments/<exp>/nothing.yaml") is not None


def test_the_check_accepts_what_exists() -> None:
    assert problem("scripts/connlab/site/render/views.py") is None
    assert problem("render/fragments.py") is None
    assert problem("connlab.site.render.views") is None
    assert problem("connlab.lab.poolers.registry.POOLERS") is None
    assert problem("build/data/facts/") is None
    assert problem("experiments/<exp>/experiment.yaml") is None
    assert problem("tests/repo/test_named_paths_exist.py") is None
