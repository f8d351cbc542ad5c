"""The vendored chart JavaScript (connlab.site.vendor), in particular vega-interpreter as a classic script."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from connlab.site.vendor import (
    INTERPRETER_EXPORT,
    INTERPRETER_IMPORT,
    INTERPRETER_MODULE,
    NODE_MODULES,
    VendorError,
    copy_vendored_js,
    interpreter_classic_script,
)

# A static import or export at the start of a line: what a classic <script> rejects as a SyntaxError.
MODULE_STATEMENT = re.compile(r"^\s*(import|export)\b(?!\s*\()", re.M)
# The module's own body between the two rewritten lines is irrelevant to the transform.
TOY_MODULE = f"{INTERPRETER_IMPORT}\n\nvar expression = {{ ascending, isString }};\n\n{INTERPRETER_EXPORT}\n"


def pinned_module() -> str:
    path = NODE_MODULES.joinpath(*INTERPRETER_MODULE)
    if not path.is_file():
        pytest.skip(f"{path} not installed (npm ci)")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("source", ["toy", "pinned"])
def test_interpreter_becomes_a_classic_script(source: str) -> None:
    module = TOY_MODULE if source == "toy" else pinned_module()
    script = interpreter_classic_script(module)
    assert not MODULE_STATEMENT.search(script)
    assert "window.vegaInterpreter = { expressionInterpreter: expression };" in script
    assert "= vega;" in script  # the imported names come from the vega UMD global
    # Line numbers are kept, so the package's source map still matches.
    assert script.count("\n") == module.count("\n")


def test_interpreter_transform_is_deterministic() -> None:
    assert interpreter_classic_script(TOY_MODULE) == interpreter_classic_script(TOY_MODULE)


@pytest.mark.parametrize(
    "module",
    [
        TOY_MODULE.replace("DisallowedObjectProperties", "SomethingNew"),
        TOY_MODULE.replace(INTERPRETER_EXPORT, "export { expression as interpreter };"),
        TOY_MODULE + "export const extra = 1;\n",
        "import { field } from 'vega-util';\n" + TOY_MODULE,
        TOY_MODULE.replace(INTERPRETER_IMPORT + "\n", ""),
    ],
    ids=["import-changed", "export-changed", "extra-export", "extra-import", "no-import"],
)
def test_an_unexpected_module_shape_fails_loudly(module: str) -> None:
    with pytest.raises(VendorError) as caught:
        interpreter_classic_script(module, origin="vega-interpreter/build/vega-interpreter.js")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("vega-interpreter/build/vega-interpreter.js: expected exactly")


def test_copy_writes_the_interpreter_once(tmp_path: Path) -> None:
    pinned_module()  # skips without node_modules
    written = copy_vendored_js(tmp_path)
    interpreter = tmp_path / "vendor" / "vega-interpreter.js"
    assert interpreter in written
    assert not MODULE_STATEMENT.search(interpreter.read_text(encoding="utf-8"))
    mtime = interpreter.stat().st_mtime_ns
    copy_vendored_js(tmp_path)
    assert interpreter.stat().st_mtime_ns == mtime  # unchanged: not rewritten


# The vega UMD build defines the names the interpreter imports; run both as a browser would (one global
# scope, classic scripts) and check the result has the interface vega-embed expects.
NODE_CHECK = """
const vm = require("vm"), fs = require("fs");
const ctx = { console, setTimeout, setInterval };
ctx.window = ctx; ctx.self = ctx;
vm.createContext(ctx);
for (const file of process.argv.slice(1)) {
  vm.runInContext(fs.readFileSync(file, "utf8"), ctx, { filename: file });
}
console.log(Object.keys(ctx.window.vegaInterpreter.expressionInterpreter).sort().join(","));
"""


def test_interpreter_script_runs_after_vega(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed")
    pinned_module()
    vendor = tmp_path / "vendor"
    copy_vendored_js(tmp_path)
    result = subprocess.run(
        [node, "-e", NODE_CHECK, str(vendor / "vega.min.js"), str(vendor / "vega-interpreter.js")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "encode,event,handler,operator,parameter"
