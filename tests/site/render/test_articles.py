"""connlab.site.render.articles: the articles declared once, their registry checked against the templates;
the menu's Articles section filled from it (connlab.site.publish.hooks)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mkdocs.exceptions import PluginError

from connlab.errors import LabError
from connlab.paths import ARTICLES_SRC_DIR
from connlab.site.publish.hooks import articles_in_nav
from connlab.site.render.articles import load_articles


def test_the_registry_declares_every_article_template_in_its_order() -> None:
    articles = load_articles()
    templates = {path.name.removesuffix(".md.j2") for path in ARTICLES_SRC_DIR.glob("*.md.j2")}
    assert {article.slug for article in articles} == templates and len(articles) == len(templates)
    assert all(article.title and article.summary for article in articles)
    assert articles[0].page == f"articles/{articles[0].slug}.md"


def registry(folder: Path, text: str, templates: dict[str, str]) -> Path:
    for slug, body in templates.items():
        (folder / f"{slug}.md.j2").write_text(body)
    (folder / "articles.yaml").write_text(text)
    return folder / "articles.yaml"


def test_titles_come_from_the_templates_and_summaries_are_one_line(tmp_path: Path) -> None:
    path = registry(tmp_path, "- slug: b\n  summary: >-\n    two\n    lines\n- slug: a\n  summary: one\n",
                    {"a": "{% if x %}\n# A title\n{% endif %}\n", "b": "# B\n"})  # fmt: skip
    assert [(a.slug, a.title, a.summary) for a in load_articles(path, tmp_path)] == [
        ("b", "B", "two lines"),
        ("a", "A title", "one"),
    ]


ONE = "- slug: a\n  summary: x\n"


@pytest.mark.parametrize(
    ("text", "templates", "message"),
    [
        (
            "- slug: a\n  summary: x\n",
            {"a": "# A\n", "b": "# B\n"},
            "b.md.j2 is an article template the registry does not",
        ),
        (
            "- slug: a\n  summary: x\n- slug: c\n  summary: y\n",
            {"a": "# A\n"},
            "entry 2: slug c: no template",
        ),
        ("- slug: a\n", {"a": "# A\n"}, "entry 1: needs a slug and a summary"),
        (ONE, {"a": "no title\n"}, "a.md.j2: no title"),
    ],
)
def test_a_registry_that_disagrees_with_the_templates_is_one_line(
    tmp_path: Path, text: str, templates: dict[str, str], message: str
) -> None:
    with pytest.raises(LabError, match=message):
        load_articles(registry(tmp_path, text, templates), tmp_path)


def test_the_menus_articles_section_is_filled_from_the_registry() -> None:
    nav = ["index.md", {"Articles": []}, "machines.md"]
    assert articles_in_nav(nav, ["articles/a.md", "articles/b.md"]) == [
        "index.md", {"Articles": ["articles/a.md", "articles/b.md"]}, "machines.md",
    ]  # fmt: skip
    assert articles_in_nav(["index.md"], ["articles/a.md"]) == ["index.md"]
    with pytest.raises(PluginError, match="one 'Articles' section"):
        articles_in_nav([{"Articles": []}, {"Articles": []}], ["articles/a.md"])
