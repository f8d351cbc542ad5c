"""connlab.site.paragraph_memo gives every page the HTML Python-Markdown gives it: a paragraph kept from an
earlier page is the paragraph converted again, wherever it comes and whatever surrounds it."""

from __future__ import annotations

from pathlib import Path

import markdown
import pytest

from conftest import site_config
from connlab.site import paragraph_memo

MEMO = "connlab.site.paragraph_memo"


def _converters() -> tuple[markdown.Markdown, markdown.Markdown]:
    """Python-Markdown with the site's extensions as mkdocs.yml names them, and without the memo."""
    config = site_config()
    extensions = list(config.markdown_extensions)
    assert MEMO in extensions, "mkdocs.yml must name the paragraph memo"
    make = lambda names: markdown.Markdown(extensions=names, extension_configs=config.mdx_configs)  # noqa: E731
    return make(extensions), make([name for name in extensions if name != MEMO])


PARAGRAPHS = [
    "Plain words over\ntwo lines.",
    "**Bold** first, then `code`, *emphasis* and _more_; 4.0 times, a\\-b \\(c\\) \\+ d.",
    "4.0 times faster: a number first.",
    "Ends in two spaces  ",
    "Has a [link](../machines.md) in it.",
    "Has <small>inline HTML</small>.",
    "Has an attribute list.\n{: .note }",
    "A list after a line\n- item",
    "1. an ordered item",
    "* a bullet",
    "Setext heading\n---",
    "Another\n===",
    "***",
    "# a heading",
    "> a quote",
    "Text with a pipe | in it",
    "Tab\tinside",
    "&amp; an entity & a bare ampersand",
    "Trailing backslash \\",
    "!!! note\n    an admonition",
    "Line one\n    indented continuation",
]
# Where a paragraph may stand: at the top (where it is kept), and where the page takes it in as something
# else: a list item's continuation, an admonition, a Markdown div, a raw div, a fence, a tab, a quote.
CONTEXTS = [
    "{p}",
    "# Title\n\n{p}\n\n## Next\n\n{p}",
    "- item\n\n    {p}\n\n{p}",
    "- item\n{p}",
    "!!! note\n\n    {p}\n\n{p}",
    '<div class="x" markdown>\n\n{p}\n\n</div>\n\n{p}',
    '<div class="x">\n\n{p}\n\n</div>\n\n{p}',
    "```\n{p}\n\n{p}\n```\n\n{p}",
    '=== "Tab"\n\n    {p}\n\n{p}',
    "> {p}\n\n{p}",
    "<!--\n\n{p}\n\n-->\n\n{p}",
    "Text before\n{p}",
]


@pytest.mark.parametrize("paragraph", PARAGRAPHS)
def test_a_kept_paragraph_converts_as_itself_wherever_it_stands(paragraph: str) -> None:
    memo, plain = _converters()
    memo.reset().convert(paragraph)  # kept, where it can be
    for context in CONTEXTS:
        page = context.format(p=paragraph)
        for _ in range(2):  # the second time, every paragraph it can take is kept from before
            assert memo.reset().convert(page) == plain.reset().convert(page), (paragraph, context)


def test_only_plain_paragraphs_are_kept() -> None:
    plain = ["Words.", "**Bold** start.", "4.0 times.", "a\\-b", "Two\nlines"]
    not_plain = ["- item", "1. item", "# h", "a [b](c)", "a <b>", "---", "x  ", "    code", "a|b", "!!! note"]
    assert all(paragraph_memo.is_plain_paragraph(text.split("\n")) for text in plain)
    assert not any(paragraph_memo.is_plain_paragraph(text.split("\n")) for text in not_plain)


def test_every_page_of_the_site_converts_as_without_the_memo(docs_from_fixtures: Path) -> None:
    """Twice over every page: the first pass keeps the paragraphs, the second finds each one kept (nothing
    left to mark) and still gives Python-Markdown's HTML."""
    memo, plain = _converters()
    pages = sorted(docs_from_fixtures.rglob("*.md"))
    preprocessor = memo.preprocessors["connlab_paragraph_memo"]
    assert isinstance(preprocessor, paragraph_memo.ParagraphMemoPreprocessor)
    kept = 0
    for sweep in range(2):
        for path in pages:
            text = path.read_text(encoding="utf-8")
            assert memo.reset().convert(text) == plain.reset().convert(text), path
            if sweep == 1:
                assert preprocessor.marked == [], path  # every plain paragraph was kept the first time
        kept = len(paragraph_memo._kept) if sweep == 0 else kept
    assert kept > 50, "the pages' repeated prose is what the memo is for"
