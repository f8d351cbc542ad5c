"""Copy the pinned Vega browser builds from node_modules/ into the site's assets.

The site must work offline, so the JavaScript that renders the charts is served from
the site itself rather than from a CDN. The versions are pinned in package.json /
package-lock.json at the repository root; `npm ci` installs them into node_modules/.
"""

from __future__ import annotations

import sys
from pathlib import Path

from connlab.contract.files import copy_if_changed
from connlab.paths import REPO_ROOT

NODE_MODULES = REPO_ROOT / "node_modules"

# (package, path inside the package) of the UMD builds that define browser globals.
REQUIRED_BUILDS: tuple[tuple[str, str], ...] = (
    ("vega", "build/vega.min.js"),
    ("vega-lite", "build/vega-lite.min.js"),
    ("vega-embed", "build/vega-embed.min.js"),
)
# No separate vega-interpreter: vega-embed's browser build bundles it and evaluates expressions with it
# when charts.js passes `ast: true`, which keeps the charts working under a CSP without 'unsafe-eval'.
# Where in the site's assets the builds go (charts.js: VEGA, VEGA_LITE, VEGA_EMBED).
VENDOR_SUBDIR = "vendor"


def vendored_path(package: str) -> str:
    """A package's build as the site's assets folder holds it, e.g. vendor/vega.min.js."""
    return next(f"{VENDOR_SUBDIR}/{Path(rel).name}" for name, rel in REQUIRED_BUILDS if name == package)


def _sources(node_modules: Path) -> list[Path]:
    missing = [f"{pkg}/{rel}" for pkg, rel in REQUIRED_BUILDS if not (node_modules / pkg / rel).is_file()]
    if missing:
        raise FileNotFoundError(
            f"missing {', '.join(missing)} in {node_modules}; run `npm ci` (or `make setup`) first"
        )
    sources = [node_modules / pkg / rel for pkg, rel in REQUIRED_BUILDS]
    # Ship the source maps the minified files point at, so browser devtools find them
    # locally instead of logging 404s.
    maps = [src.with_name(src.name + ".map") for src in sources]
    return sources + [m for m in maps if m.is_file()]


def copy_vendored_js(assets_dir: Path, node_modules: Path = NODE_MODULES) -> list[Path]:
    """Copy the Vega browser builds into assets_dir/vendor and return the destination paths."""
    vendor_dir = Path(assets_dir) / VENDOR_SUBDIR
    copied: list[Path] = []
    for src in _sources(node_modules):
        dest = vendor_dir / src.name
        copy_if_changed(src, dest)
        copied.append(dest)
    # A build dropped from REQUIRED_BUILDS must not linger in the site.
    for stale in set(vendor_dir.iterdir()) - set(copied):
        stale.unlink()
    return copied


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m connlab.site.charts.vendor ASSETS_DIR", file=sys.stderr)
        return 2
    try:
        paths = copy_vendored_js(Path(args[0]))
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
