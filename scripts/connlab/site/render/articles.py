"""The site's articles, declared once in site_src/articles/articles.yaml: their order, and a line that says
what each is about. Each article's title is its template's first heading. The render renders these and only
these; the menu (connlab.site.publish.hooks) and the pages that list the articles (templates see
`articles`) read them from here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from connlab.errors import LabError
from connlab.paths import ARTICLES_SRC_DIR

REGISTRY = ARTICLES_SRC_DIR / "articles.yaml"
TEMPLATE_SUFFIX = ".md.j2"


@dataclass(frozen=True)
class Article:
    slug: str
    title: str
    summary: str

    @property
    def page(self) -> str:
        """The article's page, as MkDocs names its Markdown (docs-relative)."""
        return f"articles/{self.slug}.md"


def _title(template: Path) -> str:
    with template.open(encoding="utf-8") as handle:
        return next((line[2:].strip() for line in handle if line.startswith("# ")), "")


def load_articles(registry: Path = REGISTRY, templates: Path = ARTICLES_SRC_DIR) -> list[Article]:
    """Every article the registry declares, in its order; an entry without its template, a template the
    registry leaves out, or an entry without a slug or summary is an error naming the file and entry."""
    entries = yaml.safe_load(registry.read_text(encoding="utf-8")) or []
    articles: list[Article] = []
    for number, entry in enumerate(entries, start=1):
        where = f"{registry}: entry {number}"
        if not isinstance(entry, dict) or not entry.get("slug") or not entry.get("summary"):
            raise LabError(f"{where}: needs a slug and a summary")
        template = templates / f"{entry['slug']}{TEMPLATE_SUFFIX}"
        if not template.is_file():
            raise LabError(f"{where}: slug {entry['slug']}: no template {template.name}")
        title = _title(template)
        if not title:
            raise LabError(f"{template}: no title (a line starting with '# ')")
        articles.append(Article(str(entry["slug"]), title, " ".join(str(entry["summary"]).split())))
    declared = {article.slug for article in articles}
    for template in sorted(templates.glob(f"*{TEMPLATE_SUFFIX}")):
        if template.name.removesuffix(TEMPLATE_SUFFIX) not in declared:
            raise LabError(
                f"{registry}: {template.name} is an article template the registry does not declare"
            )
    return articles
