"""Copy the pinned Vega browser builds from node_modules/ into the site's assets.

The site must work offline, so the JavaScript that renders the charts is served from
the site itself rather than from a CDN. The versions are pinned in package.json /
package-lock.json at the repository root; `npm ci` installs them into node_modules/.
"""

from __future__ import annotations

import sys
from pathlib import Path

from connlab.errors import LabError

REPO_ROOT = Path(__file__).resolve().parents[3]
NODE_MODULES = REPO_ROOT / "node_modules"

# (package, path inside the package) of the UMD builds that define browser globals.
REQUIRED_BUILDS: tuple[tuple[str, str], ...] = (
    ("vega", "build/vega.min.js"),
    ("vega-lite", "build/vega-lite.min.js"),
    ("vega-embed", "build/vega-embed.min.js"),
)

# vega-interpreter evaluates Vega expressions without `new Function`, so the charts work
# under a Content-Security-Policy without 'unsafe-eval'. It ships only an ES module that
# imports a bare specifier ('vega-util'), which a plain <script> cannot load; it is turned
# into a classic script that takes those names from the `vega` global (the vega UMD build
# exports them) and defines `window.vegaInterpreter`.
INTERPRETER_MODULE = ("vega-interpreter", "build/vega-interpreter.js")
INTERPRETER_IMPORT = "import { ascending, isString, DisallowedObjectProperties } from 'vega-util';"
INTERPRETER_EXPORT = "export { expression as expressionInterpreter };"
# The replacements keep every line where it was, so the package's source map still fits.
INTERPRETER_PROLOGUE = (
    '(function (vega) { "use strict"; const { ascending, isString, DisallowedObjectProperties } = vega;'
)
INTERPRETER_EPILOGUE = "window.vegaInterpreter = { expressionInterpreter: expression }; })(window.vega);"


class VendorError(LabError):
    """A vendored file is not what the copy expects; `connlab render` prints the message as one line."""


def _write_bytes_if_changed(data: bytes, dest: Path) -> bool:
    """Write data to dest unless dest already has identical bytes.

    Leaving unchanged files alone keeps their mtimes stable, so `mkdocs serve` and make
    do not see spurious changes.
    """
    if dest.is_file() and dest.read_bytes() == data:
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(dest)  # atomic: a concurrent server never sees a half-written file
    return True


def _write_if_changed(src: Path, dest: Path) -> bool:
    """Copy src to dest unless dest already has identical bytes."""
    return _write_bytes_if_changed(src.read_bytes(), dest)


def _is_module_statement(line: str) -> bool:
    """True for a line that only an ES module may contain (static import or export)."""
    stripped = line.lstrip()
    return stripped.startswith(("import ", "import{", "export ", "export{"))


def interpreter_classic_script(module_source: str, origin: str = INTERPRETER_MODULE[1]) -> str:
    """Turn vega-interpreter's ES module into a classic script that defines window.vegaInterpreter.

    Only the exact import and export lines of the pinned release are rewritten; any other
    module statement means a new release changed its shape, and guessing could ship a
    script that breaks every chart at run time, so it fails instead.
    """
    lines = module_source.splitlines(keepends=True)
    statements = [(i, line.rstrip("\r\n")) for i, line in enumerate(lines) if _is_module_statement(line)]
    expected = [INTERPRETER_IMPORT, INTERPRETER_EXPORT]
    if [text for _, text in statements] != expected or statements[0][0] != 0:
        found = "; ".join(f"line {i + 1}: {text}" for i, text in statements) or "none"
        raise VendorError(
            f"{origin}: expected exactly the module lines {expected} (the import first),"
            f" found {found}; update connlab.site.vendor for this vega-interpreter release"
        )
    for (index, _), replacement in zip(statements, (INTERPRETER_PROLOGUE, INTERPRETER_EPILOGUE), strict=True):
        ending = lines[index][len(lines[index].rstrip("\r\n")) :]
        lines[index] = replacement + ending
    return "".join(lines)


def _sources(node_modules: Path) -> list[Path]:
    """The UMD builds to copy as they are, plus the source maps next to them."""
    sources = [node_modules / pkg / rel for pkg, rel in REQUIRED_BUILDS]
    # Ship the source maps the minified files point at, so browser devtools find them
    # locally instead of logging 404s.
    maps = [src.with_name(src.name + ".map") for src in sources]
    return sources + [m for m in maps if m.is_file()]


def _check_installed(node_modules: Path) -> None:
    wanted = [*REQUIRED_BUILDS, INTERPRETER_MODULE]
    missing = [f"{pkg}/{rel}" for pkg, rel in wanted if not (node_modules / pkg / rel).is_file()]
    if missing:
        raise FileNotFoundError(
            f"missing {', '.join(missing)} in {node_modules}; run `npm ci` (or `make setup`) first"
        )


def _copy_interpreter(vendor_dir: Path, node_modules: Path) -> list[Path]:
    """Write the classic-script interpreter (and its source map, whose lines still match)."""
    pkg, rel = INTERPRETER_MODULE
    src = node_modules / pkg / rel
    script = interpreter_classic_script(src.read_text(encoding="utf-8"), origin=f"{pkg}/{rel}")
    dest = vendor_dir / src.name
    _write_bytes_if_changed(script.encode("utf-8"), dest)
    written = [dest]
    source_map = src.with_name(src.name + ".map")
    if source_map.is_file():
        written.append(vendor_dir / source_map.name)
        _write_if_changed(source_map, written[-1])
    return written


def copy_vendored_js(assets_dir: Path, node_modules: Path = NODE_MODULES) -> list[Path]:
    """Copy the Vega browser builds into assets_dir/vendor and return the destination paths."""
    _check_installed(node_modules)
    vendor_dir = Path(assets_dir) / "vendor"
    copied: list[Path] = []
    for src in _sources(node_modules):
        dest = vendor_dir / src.name
        _write_if_changed(src, dest)
        copied.append(dest)
    return copied + _copy_interpreter(vendor_dir, node_modules)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m connlab.site.vendor ASSETS_DIR", file=sys.stderr)
        return 2
    try:
        paths = copy_vendored_js(Path(args[0]))
    except (FileNotFoundError, VendorError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
