"""Vega's expressions for the compiled chart set, made into functions at build time.

Vega makes a function of every expression in a chart (signal updates, filters, formulas, mark encodings): with
`new Function`, which a Content-Security-Policy without 'unsafe-eval' blocks, or, as charts.js asks it to, by
interpreting the parsed expression for every datum. The interpreter took a fifth of the time a machine's page
spent drawing its charts. compile_expressions.mjs parses every compiled chart (connlab.site.charts.compiled)
with the browser's vega and notes the function Vega's own code generator makes for each expression; the
functions are written as one script per set, which the page loads from the site like any other script, and
charts.js gives them to Vega in place of the interpreter. An expression the script lacks (a chart drawn from
its Vega-Lite spec) is still interpreted.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from connlab.site.charts.constants import EXPRESSIONS_SUFFIX

EXPRESSION_COMPILER = Path(__file__).with_name("compile_expressions.mjs")
# How the script ends when node wrote it whole: a kept copy that does not is made again.
SCRIPT_END = "\n};\n"


def expressions_asset_name(set_name: str) -> str:
    """The set's script beside its variants' Vega (charts.js: expressionsUrl)."""
    return f"{set_name}{EXPRESSIONS_SUFFIX}"


def run_node(script: Path, stdin: str, *args: str) -> str:
    """stdout of `node script args...`, with a one-line error where node is missing or the script fails."""
    try:
        done = subprocess.run(
            ["node", str(script), *args], input=stdin, capture_output=True, text=True, check=True
        )
    except FileNotFoundError as exc:
        raise RuntimeError("node is needed to compile the charts (make setup installs it)") from exc
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"{script.name} failed:\n{exc.stderr}") from exc
    return done.stdout


def compile_expressions(specs: list[dict], set_name: str) -> str:
    """The script that holds, for the set's Vega specs, the function of every expression."""
    script = run_node(EXPRESSION_COMPILER, json.dumps(specs), set_name)
    if not script.endswith(SCRIPT_END):
        raise RuntimeError(f"{EXPRESSION_COMPILER.name} wrote no whole script")
    return script
