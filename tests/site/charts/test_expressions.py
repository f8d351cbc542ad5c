"""The compiled chart set's expressions made into functions at build time (connlab.site.charts.expressions,
compile_expressions.mjs): a script of Vega's own functions, kept in the cache by the set's digest, the same
whether the set was compiled in this build or read back from the cache. That the browser draws every compiled
chart with them, interpreting none of its expressions, is checked by tests/browser/test_site_browser.py."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from connlab.site.charts import compiled as compiled_charts
from connlab.site.charts import expressions as compiled_expressions
from connlab.site.charts.compiled import CACHE_SUBDIR, KINDS, VARIANTS
from connlab.site.charts.expressions import SCRIPT_END, expressions_asset_name

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

# Runs the script as a page does and calls one operator function and one encoding function as Vega calls
# them: `this` is the chart's functions; an operator gets the signals, an encoding the item it sets.
CALL_JS = """
const fs = require("fs");
globalThis.self = globalThis;
eval(fs.readFileSync(process.argv[1], "utf8"));
const [, , setName, operatorCode, encodingKey] = process.argv;
const table = self.connlabExpressions[setName];
const functions = { format: (value) => "formatted " + value };
const item = { datum: { clients: 7 } };
const changed = table.encode[encodingKey].call(functions, item, {});
console.log(JSON.stringify({
  kinds: Object.keys(table),
  operator: table.operator[operatorCode].call(functions, { $width: 300 }),
  text: item.text,
  changed,
}));
"""

# The script's keys, by kind.
LIST_JS = """
globalThis.self = globalThis;
eval(require("fs").readFileSync(process.argv[1], "utf8"));
const table = Object.values(self.connlabExpressions)[0];
const keys = Object.entries(table).map(([kind, functions]) => [kind, Object.keys(functions)]);
console.log(JSON.stringify(Object.fromEntries(keys)));
"""

# A signal updated by `width / 2`, and a text mark whose text is its datum's clients, formatted.
SPEC = {
    "signals": [{"name": "width", "value": 300}, {"name": "half", "update": "width / 2"}],
    "data": [{"name": "rows", "values": []}],
    "marks": [
        {
            "type": "text",
            "from": {"data": "rows"},
            "encode": {"update": {"text": {"signal": "format(datum.clients)"}}},
        }
    ],
}
# The code Vega's code generator writes for them, and the encoding's key (charts.js: encodingKey).
OPERATOR_CODE = '(_["$width"] / 2)'
ENCODING_KEY = json.dumps(["text", [["text", "this.format(datum.clients)"]]], separators=(",", ":"))


def call(script: str, set_name: str, tmp_path: Path) -> dict:
    path = tmp_path / "expressions.js"
    path.write_text(script, encoding="utf-8")
    done = subprocess.run(
        ["node", "-e", CALL_JS, str(path), set_name, OPERATOR_CODE, ENCODING_KEY],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


@pytest.fixture
def fresh_set() -> None:
    compiled_charts.set_name.cache_clear()
    yield
    compiled_charts.set_name.cache_clear()


@pytest.mark.process
def test_the_script_files_vegas_own_functions_under_the_sets_name(tmp_path: Path) -> None:
    script = compiled_expressions.compile_expressions([SPEC], "a-set")
    assert script.endswith(SCRIPT_END)
    called = call(script, "a-set", tmp_path)
    assert called["kinds"] == ["operator", "parameter", "event", "handler", "encode"]
    assert called["operator"] == 150, "the signal's update is not width / 2"
    assert called["text"] == "formatted 7", "the encoding does not call the chart's own functions"
    assert called["changed"] == 1


@pytest.mark.process
def test_a_failing_compile_names_the_script(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"^compile_expressions\.mjs failed"):
        compiled_expressions.compile_expressions([{"signals": [{"name": "x", "update": "1 +"}]}], "a-set")


@pytest.mark.process
def test_without_node_the_error_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RuntimeError, match=r"node is needed .*make setup"):
        compiled_expressions.compile_expressions([SPEC], "a-set")


@pytest.mark.process
def test_the_sets_script_is_kept_and_made_again_only_when_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_set: None
) -> None:
    compiled = compiled_charts.compiled_set(tmp_path)
    runs: list[int] = []

    def counting(specs: list[dict], set_name: str) -> str:
        runs.append(len(specs))
        return compiled_expressions.compile_expressions(specs, set_name)

    monkeypatch.setattr(compiled_charts, "compile_expressions", counting)
    script = compiled_charts.expressions_script(compiled, tmp_path)
    assert runs == [len(KINDS) * len(VARIANTS)], "one run of node for every kind and variant"
    assert f'["{compiled_charts.set_name()}"]' in script
    assert compiled_charts.expressions_script(compiled, tmp_path) == script
    assert len(runs) == 1, "made again though nothing changed"
    kept = tmp_path / CACHE_SUBDIR / expressions_asset_name(compiled_charts.set_name())
    kept.write_text(script[: len(script) // 2], encoding="utf-8")  # cut short, as by a crash mid-write
    assert compiled_charts.expressions_script(compiled, tmp_path) == script
    assert len(runs) == 2


@pytest.mark.process
def test_a_set_compiled_in_this_build_gives_the_script_a_kept_set_gives(
    tmp_path: Path, fresh_set: None
) -> None:
    """The functions are found by their code, written in the order of the spec's keys: the set as compiled
    in a cold build must have the order of the set read back from the cache and of the assets (sorted)."""
    cold = compiled_charts.compiled_set(tmp_path)
    warm = compiled_charts.compiled_set(tmp_path)
    for variant in cold:
        for kind in cold[variant]:
            assert json.dumps(cold[variant][kind]) == json.dumps(warm[variant][kind]), (variant, kind)
    specs = [cold[variant.name][kind] for variant in VARIANTS for kind in KINDS]
    assert json.dumps(specs) == json.dumps(specs, sort_keys=True)


@pytest.mark.process
def test_expressions_inside_a_groups_marks_and_event_handlers_are_made(tmp_path: Path) -> None:
    """Vega parses a group's marks (a subflow) only once the group is drawn, and a signal's event handlers
    apart from its operators: their expressions are in the script too."""
    spec = {
        "signals": [
            {
                "name": "clicks",
                "value": 0,
                "on": [{"events": "click[event.shiftKey]", "update": "clicks + 1"}],
            }
        ],
        "data": [{"name": "rows", "values": []}],
        "marks": [
            {
                "type": "group",
                "from": {"facet": {"name": "series", "data": "rows", "groupby": "series"}},
                "marks": [{**SPEC["marks"][0], "from": {"data": "series"}}],
            }
        ],
    }
    script = compiled_expressions.compile_expressions([spec], "a-set")
    path = tmp_path / "expressions.js"
    path.write_text(script, encoding="utf-8")
    listed = subprocess.run(
        ["node", "-e", LIST_JS, str(path)], capture_output=True, text=True, check=True
    ).stdout
    table = json.loads(listed)
    assert ENCODING_KEY in table["encode"], "the group's text mark has no encoding function"
    assert table["event"] == ["event.shiftKey"]
    assert table["handler"] == ['(_["$clicks"] + 1)']
