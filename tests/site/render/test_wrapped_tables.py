"""connlab.site.render.wrapped_tables writes each table in Material's scroll wrappers, with a class Material's
script leaves alone; site_src/assets/tables.css restates Material's look for tables without a class for
that class."""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import material
import pytest

from connlab.site.render.tables import points_table
from connlab.site.render.wrapped_tables import TABLE_CLASS, WRAPPER_END, WRAPPER_START, wrap_tables
from support.paths import REPO_ROOT

TABLES_CSS = REPO_ROOT / "site_src" / "assets" / "tables.css"
MATERIAL_CSS = sorted(
    (Path(material.__file__).parent / "templates" / "assets" / "stylesheets").glob("main.*.min.css")
)
EXTENSIONS = ["tables", "connlab.site.render.wrapped_tables"]
TABLE_MD = "| a | b |\n|---|---|\n| 1 | 2 |\n"


def test_a_table_is_written_in_materials_wrappers_with_the_class() -> None:
    html = "<p>x</p>\n<table>\n<tr><td>1</td></tr>\n</table>\n<p>y</p>"
    assert wrap_tables(html) == (
        f'<p>x</p>\n{WRAPPER_START}<table class="{TABLE_CLASS}">\n<tr><td>1</td></tr>\n</table>'
        f"{WRAPPER_END}\n<p>y</p>"
    )


def test_every_table_is_wrapped_once_and_its_attributes_kept() -> None:
    html = '<table id="t1">a</table><table>b</table>'
    wrapped = wrap_tables(html)
    assert wrapped == (
        f'{WRAPPER_START}<table class="{TABLE_CLASS}" id="t1">a</table>{WRAPPER_END}'
        f'{WRAPPER_START}<table class="{TABLE_CLASS}">b</table>{WRAPPER_END}'
    )
    assert wrap_tables(wrapped) == wrapped, "a wrapped table has a class: wrapping again changes nothing"


@pytest.mark.parametrize(
    "html", ['<table class="highlighttable"><tr><td>x</td></tr></table>', "<p>no table</p>", "<tablet>"]
)
def test_a_table_with_a_class_and_text_without_a_table_are_left_as_they_are(html: str) -> None:
    assert wrap_tables(html) == html


def test_markdown_tables_and_generated_html_tables_come_out_wrapped() -> None:
    """A table written in Markdown (a template's) and one written as raw HTML (connlab.site.render.tables):
    the wrappers go around both."""
    plain = markdown.markdown(TABLE_MD, extensions=EXTENSIONS)
    marked = markdown.markdown(points_table([]), extensions=EXTENSIONS)
    for html in (plain, marked):
        assert html.count(WRAPPER_START) == html.count("<table") == 1, html
        assert html.startswith(f'{WRAPPER_START}<table class="{TABLE_CLASS}">'), html
        assert html.endswith(f"</table>{WRAPPER_END}"), html


# -- the look, restated -----------------------------------------------------------------------------------
def css_rules(css: str) -> set[tuple[str, str, frozenset[str]]]:
    """(media query or "", selector, declarations) of every rule, with white space made canonical."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    found: set[tuple[str, str, frozenset[str]]] = set()

    def canonical(text: str) -> str:
        text = re.sub(r"\s*([>+~,:;{}])\s*", r"\1", text.strip())
        return re.sub(r"\s+", " ", text)

    def walk(text: str, media: str) -> None:
        position = 0
        while (opening := text.find("{", position)) >= 0:
            head = text[position:opening].strip()
            if head.startswith("@"):
                depth, end = 1, opening + 1
                while depth:
                    depth += {"{": 1, "}": -1}.get(text[end], 0)
                    end += 1
                if head.startswith("@media"):
                    walk(text[opening + 1 : end - 1], canonical(head))
                position = end
                continue
            closing = text.index("}", opening)
            declarations = frozenset(
                canonical(d) for d in text[opening + 1 : closing].split(";") if d.strip()
            )
            found.add((media, canonical(head), declarations))
            position = closing + 1

    walk(css, "")
    return found


def test_tables_css_restates_every_rule_material_has_for_a_table_without_a_class() -> None:
    assert len(MATERIAL_CSS) == 1, f"Material's main stylesheet: {MATERIAL_CSS}"
    materials = {
        (media, selector.replace("table:not([class])", f"table.{TABLE_CLASS}"), declarations)
        for media, selector, declarations in css_rules(MATERIAL_CSS[0].read_text(encoding="utf-8"))
        if "table:not([class])" in selector
    }
    assert len(materials) >= 10, materials
    ours = css_rules(TABLES_CSS.read_text(encoding="utf-8"))
    assert materials == ours, {"missing here": materials - ours, "not Material's": ours - materials}


def test_no_stylesheet_of_ours_styles_a_table_without_a_class() -> None:
    """Every table the site shows has the class: a rule for `table:not([class])` would style none."""
    for sheet in (REPO_ROOT / "site_src" / "assets").glob("*.css"):
        selectors = [selector for _, selector, _ in css_rules(sheet.read_text(encoding="utf-8"))]
        assert not [selector for selector in selectors if "table:not([class])" in selector], sheet
        assert selectors, f"no rule read from {sheet}"  # the reader is not blind
