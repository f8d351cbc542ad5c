"""connlab.site.fast_tables writes the same HTML as Python-Markdown's tables: on odd cells and rows, and on
every page of the site rendered from the committed results."""

from __future__ import annotations

from pathlib import Path

import markdown
import pytest

from conftest import site_config
from connlab.site.fast_tables import plain_cell

FAST = "connlab.site.fast_tables"


def _converters() -> tuple[markdown.Markdown, markdown.Markdown]:
    """Python-Markdown with the site's extensions: as mkdocs.yml names them, and with `tables` instead."""
    config = site_config()
    extensions = list(config.markdown_extensions)
    assert FAST in extensions, "mkdocs.yml must name the fast tables in place of tables"
    slow = [("tables" if name == FAST else name) for name in extensions]
    make = lambda names: markdown.Markdown(extensions=names, extension_configs=config.mdx_configs)  # noqa: E731
    return make(extensions), make(slow)


ODD_CELLS = [
    "plain words", "12,345", "0.94 (0.90–0.97)", "select\\-only", "\\(cores × 2\\) \\+ spindles", "a\\\\b",
    "a\\\\*b*", "\\*not emphasis\\*", "**holds** 0.94", "*em*", "_em_", "snake_case_name", "`code`",
    "`a|b` in code", "``x`y``", "[a link](x.md)", "![image](x.png)", "<br>", "<small>x</small>", "&amp;",
    "& alone", "3 < 4", "a > b", "\\>", "\\<", "\\&", "\\q", "ends in \\", "\\|", "x \\| y", "\\\\|",
    "{: .cls}", "{x}", "a!b", "]", "N\\*", "2 < 3 and **x**", "\u0002", "  spaced  ", "",
    # The verdict tables' markup: bold, a line break, small print, and what resembles them.
    "**holds** 0.95 (0.90–0.97)", "**a\\-b**<br><small>c \\(d\\)</small>", "<small>**x**</small>",
    "**a** **b**", "a**b**c", "** x**", "**x **", "**", "****", "***x***", "a\\**b**", "**a<br>b**",
    "a<br>b", "<small>x", "x</small>", "<BR>", "<br/>", "<br><br>", "**a*b**", "**a_b**", "**\\***",
    "<small>2 < 3</small>", "**x** &amp;", "<small>`x`</small>", "**[a](b)**", "<small></small>",
    "N\\* x<br><small>N\\*</small>", "a\\\\**b**", "\\**b**", "**b\\**", "**b**\\*",
]  # fmt: skip


def _table(cells: list[str]) -> str:
    header = "| a | b | c |\n|---|---:|:---:|\n"
    return header + "".join(f"| {cell} | {cell}x | x{cell} |\n" for cell in cells)


def test_odd_cells_convert_as_python_markdown_converts_them() -> None:
    fast, slow = _converters()
    for cell in ODD_CELLS:
        text = _table([cell])
        assert fast.reset().convert(text) == slow.reset().convert(text), cell
    text = _table(ODD_CELLS)
    assert fast.reset().convert(text) == slow.reset().convert(text)


def test_rows_split_as_python_markdown_splits_them() -> None:
    fast, slow = _converters()
    rows = ["| a | b |", "a | b", "| a \\| b | c |", "| `a | b` | c |", "| a\\\\| b |", "| a | b | c |"]
    rows.append("|a|")
    for row in rows:
        text = f"| h | i |\n|---|---|\n{row}\n"
        assert fast.reset().convert(text) == slow.reset().convert(text), row


def test_plain_cells_skip_the_inline_patterns() -> None:
    """The fast path is taken for what the site's tables mostly hold, and only there."""
    escapable = markdown.Markdown(extensions=["tables"]).ESCAPED_CHARS
    assert plain_cell("12,345 (12,000–12,500)", escapable) == "12,345 (12,000–12,500)"
    assert plain_cell("select\\-only", escapable) == "select-only"
    assert plain_cell("\\(a\\) \\\\ b", escapable) == "(a) \\ b"
    for marked in ("**holds**", "`x`", "[a](b)", "<br>", "&amp;", "\\q", "a\\", "\\\\*x*", "{x}"):
        assert plain_cell(marked, escapable) is None, marked


def test_a_table_of_plain_cells_is_written_whole_and_kept_aside() -> None:
    """No element of a table of plain cells (or the verdicts' bold, line breaks and small print) reaches the
    tree; one cell with other markup sends the table back to it."""
    fast, _ = _converters()
    plain = _table(["12,345", "select\\-only", "\\>", ""])
    tree_rows: list[str] = []
    processor = fast.parser.blockprocessors["table"]
    build_row = processor._build_row
    processor._build_row = lambda row, parent, align: (tree_rows.append(row), build_row(row, parent, align))
    html = fast.reset().convert(plain)
    assert tree_rows == [] and fast.htmlStash.html_counter == 1
    assert '<td style="text-align: right;">select-onlyx</td>' in html and "<td>&gt;</td>" in html
    verdicts = fast.reset().convert(_table(["**holds** 0.95<br><small>seed\\-made</small>"]))
    assert tree_rows == [] and fast.htmlStash.html_counter == 1
    assert "<td><strong>holds</strong> 0.95<br><small>seed-made</small></td>" in verdicts
    fast.reset().convert(_table(["12,345", "[a link](x.md)"]))
    assert len(tree_rows) == 3 and fast.htmlStash.html_counter == 0


TABLE = "| a | b |\n|---|--:|\n| 1 | x\\-y |\n| 2 | z |"


def test_a_verdict_tables_div_is_written_whole_before_md_in_html_reads_the_page() -> None:
    """md_in_html never sees a div that holds one table of plain cells; one holding more is left to it."""
    fast, _ = _converters()
    table = "| a | b |\n|---|---|\n| **holds**<br><small>x</small> | 2 |"
    verdicts = f'<div class="verdict-table" markdown>\n\n{table}\n\n</div>'
    read: list[str] = []
    html_block = fast.preprocessors["html_block"]
    run = html_block.run
    html_block.run = lambda lines: (read.extend(lines), run(lines))[1]  # type: ignore[method-assign]
    html = fast.reset().convert(verdicts)
    assert '<div class="verdict-table">' in html and "<strong>holds</strong><br><small>x</small>" in html
    assert not any("verdict-table" in line for line in read) and fast.htmlStash.html_counter == 1
    read.clear()
    fast.reset().convert(verdicts.replace("\n\n</div>", "\n\nMore.\n\n</div>"))
    assert any("verdict-table" in line for line in read)


# Wherever a table stands, it converts as Python-Markdown's tables convert it.
TABLE_PLACES = [
    TABLE,
    f"Before.\n\n{TABLE}\n\nAfter.",
    f"A paragraph line\n{TABLE}",
    f"{TABLE}\nA line that continues the block",
    f"```\n{TABLE}\n```",
    f'<div class="verdict-table" markdown>\n\n{TABLE}\n\n</div>',
    f'Before.\n\n<div class="verdict-table" markdown>\n\n{TABLE}\n\n</div>\n\nAfter.',
    f'<div class="verdict-table" markdown>\n\n{TABLE}\n\n</div>\n<div class="b" markdown>\n\n{TABLE}\n</div>',
    f'<div class="verdict-table" markdown>\n\n{TABLE}\n\nA paragraph too.\n\n</div>',
    f'<div class="verdict-table" markdown>\n\n{TABLE}\n\n{TABLE}\n\n</div>',
    f'<div class="verdict-table" markdown>\n{TABLE}\n</div>',
    f'<div class="verdict-table" markdown>\n\n{TABLE}\n\n',
    '<div class="verdict-table" markdown>\n\n| a | b |\n|---|---|\n| [x](y) | 2 |\n\n</div>',
    f'<div markdown>\n\n<div class="verdict-table" markdown>\n\n{TABLE}\n\n</div>\n\n</div>',
    f'<div>\n<div class="verdict-table" markdown>\n\n{TABLE}\n\n</div>\n</div>',
    f'<!--\n<div class="verdict-table" markdown>\n\n{TABLE}\n\n</div>\n-->',
    f'```\n<div class="verdict-table" markdown>\n\n{TABLE}\n\n</div>\n```',
    f'- an item\n\n    <div class="verdict-table" markdown>\n\n    {TABLE}\n\n    </div>',
    f"<div>\n\n{TABLE}\n\n</div>",
    f"<!--\n\n{TABLE}\n\n-->",
    f"<div markdown>\n\n<div>\n\n{TABLE}\n\n</div>\n\n</div>",
    f'<div markdown="span">\n\n{TABLE}\n\n</div>',
    "!!! note\n\n    " + TABLE.replace("\n", "\n    "),
    f"- an item\n\n{TABLE}",
    f"- an item\n\n    {TABLE}",
    f"> {TABLE}",
    "| a |\n| - |\n| 1 |",
    "| a | b |\n| not a separator |\n| 1 | 2 |",
    "| a | b |\n|---|---|",
]


@pytest.mark.parametrize("text", TABLE_PLACES)
def test_a_table_converts_as_python_markdown_converts_it_wherever_it_is(text: str) -> None:
    fast, slow = _converters()
    assert fast.reset().convert(text) == slow.reset().convert(text)


def test_every_page_of_the_site_converts_as_with_python_markdown_tables(docs_from_fixtures: Path) -> None:
    docs = docs_from_fixtures
    fast, slow = _converters()
    pages = sorted(docs.rglob("*.md"))
    assert any(path.parent.name == "machines" for path in pages), "the site's machine pages hold most tables"
    tables = 0
    for path in pages:
        text = path.read_text(encoding="utf-8")
        html = fast.reset().convert(text)
        assert html == slow.reset().convert(text), path.relative_to(docs)
        tables += html.count("<table")
    assert tables > 20
