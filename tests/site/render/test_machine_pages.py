"""Machine pages cached by the hash of what they show (connlab.site.render.machine_pages): an
unchanged page is read back, not rendered; adding a machine renders that machine's page alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from connlab.contract.cache import canonical_json
from connlab.contract.facts_files import machine_facts_path
from connlab.contract.files import write_if_changed
from connlab.data.aggregate import aggregate_all
from connlab.site.charts.book import ChartBook
from connlab.site.layout import machine_fragment, stamped_sources
from connlab.site.render import machine_pages as page_cache_module
from connlab.site.render.machine_pages import (
    PAGE_SUFFIX,
    record_written,
    render_machine_pages,
    shared_verdicts,
    store_machine_pages,
)
from connlab.site.render.renderer import PageRenderer
from support.helpers import SLUGS, render, sweep
from support.paths import FACTS_BEFORE

if TYPE_CHECKING:
    from support.rows import RunWriter


@pytest.mark.slow
def test_only_a_new_machine_is_rendered(tmp_path: Path, write_run: RunWriter) -> None:
    results, data, docs, cache = (tmp_path / name for name in ("results", "data", "docs", "cache"))
    for machine, scale in (("a-box", 1.0), ("b-box", 2.0)):
        write_run(results, machine, sweep(scale), profile="full")
    aggregate_all(results_dir=results, out_dir=data)
    first, rendered = render(data, docs, cache)
    page_a, page_b = (
        stamped_sources(docs) / machine_fragment("a-box"),
        stamped_sources(docs) / machine_fragment("b-box"),
    )
    assert rendered == {page_a, page_b}
    assert '<h1 id="a-box">a-box' in first[page_a] and "\0" not in first[page_a]

    again, rendered = render(data, docs, cache)
    assert rendered == set()
    assert again == first

    write_run(results, "c-box", sweep(3.0), profile="full")
    aggregate_all(results_dir=results, out_dir=data)
    added, rendered = render(data, docs, cache)
    assert rendered == {stamped_sources(docs) / machine_fragment("c-box")}
    assert added[page_a] == first[page_a] and added[page_b] == first[page_b]


def test_a_kept_page_keeps_its_text_when_the_page_is_written_again(tmp_path: Path) -> None:
    """A page is replaced by renaming a new file over it, so its cache entry (a link) keeps the old text;
    where no link can be made, the text is written."""
    docs, cache = tmp_path / "docs", tmp_path / "cache"
    page, unwritten = (
        stamped_sources(docs) / machine_fragment("a-box"),
        stamped_sources(docs) / machine_fragment("b-box"),
    )
    write_if_changed(page, "first\n")
    store_machine_pages({page: "first\n", unwritten: "never written\n"}, {page: "k1", unwritten: "k2"}, cache)
    write_if_changed(page, "second\n")
    assert (cache / f"k1{PAGE_SUFFIX}").read_text() == "first\n"
    assert (cache / f"k2{PAGE_SUFFIX}").read_text() == "never written\n"
    assert not list(cache.glob("*.tmp"))


@pytest.mark.slow
def test_the_cache_holds_the_page_alone(
    tmp_path: Path, write_run: RunWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine page's charts are drawn from the spec the page holds, with no file beside them; a chart
    that would write one (an SVG fallback) is refused, since the cache would neither keep nor check it."""
    results, data, docs, cache = (tmp_path / name for name in ("results", "data", "docs", "cache"))
    write_run(results, "a-box", sweep(1.0), profile="full")
    aggregate_all(results_dir=results, out_dir=data)
    pages, _ = render(data, docs, cache)
    assert "connlab-chart--browser-only" in pages[stamped_sources(docs) / machine_fragment("a-box")]
    assert not list((docs / "charts").glob("*a-box*"))
    page = stamped_sources(docs) / machine_fragment("a-box")
    [entry] = cache.glob(f"*{PAGE_SUFFIX}")
    assert entry.read_text() == pages[page] and entry.samefile(page), "kept as a link to the page written"

    request = ChartBook.request

    def with_svg(self: ChartBook, chart_id: str, kind: str, records: Any, *labels: str, **_: Any) -> str:
        return request(self, chart_id, kind, records, *labels[:3], svg=True)

    monkeypatch.setattr(ChartBook, "request", with_svg)
    with pytest.raises(ValueError, match="drawn in the browser only"):
        render(data, docs, tmp_path / "other-cache")


@pytest.mark.slow
def test_a_changed_machine_file_renders_its_page_again(tmp_path: Path, write_run: RunWriter) -> None:
    results, data, docs, cache = (tmp_path / name for name in ("results", "data", "docs", "cache"))
    write_run(results, "a-box", sweep(1.0), profile="full")
    aggregate_all(results_dir=results, out_dir=data)
    render(data, docs, cache)
    machine_file = results / "a-box" / "machine.yaml"
    facts = yaml.safe_load(machine_file.read_text())
    machine_file.write_text(yaml.safe_dump({**facts, "description": "a new description"}))
    aggregate_all(results_dir=results, out_dir=data)
    pages, rendered = render(data, docs, cache)
    assert rendered == {stamped_sources(docs) / machine_fragment("a-box")}
    assert "a new description" in pages[stamped_sources(docs) / machine_fragment("a-box")]


@pytest.mark.slow
def test_a_machine_whose_facts_are_written_again_is_rendered_again(
    tmp_path: Path, write_run: RunWriter
) -> None:
    """A machine's own facts file replaced with other figures, as the aggregation replaces it (a new file
    renamed over it), and nothing else changed: its page is rendered again (the key holds the file's
    status), the other machine's is kept."""
    results, data, docs, cache = (tmp_path / name for name in ("results", "data", "docs", "cache"))
    for machine, scale in (("a-box", 1.0), ("b-box", 2.0)):
        write_run(results, machine, sweep(scale), profile="full")
    aggregate_all(results_dir=results, out_dir=data)
    first, _ = render(data, docs, cache)
    own = machine_facts_path(data / "facts", "too-many-connections", "a-box")
    text = own.read_text(encoding="utf-8")
    assert "1800" in text
    assert write_if_changed(own, text.replace("1800", "1900"))
    pages, rendered = render(data, docs, cache)
    page_a = stamped_sources(docs) / machine_fragment("a-box")
    assert rendered == {page_a}
    assert pages[page_a] != first[page_a]


@pytest.mark.slow
def test_a_page_written_from_the_same_inputs_is_kept_unread(tmp_path: Path, write_run: RunWriter) -> None:
    """A page build/docs holds from the same key, untouched since, is neither read back nor written again;
    one edited in build/docs is read back from the cache and written over."""
    results, data, docs, cache = (tmp_path / name for name in ("results", "data", "docs", "cache"))
    write_run(results, "a-box", sweep(1.0), profile="full")
    aggregate_all(results_dir=results, out_dir=data)
    renderer = PageRenderer(data, docs)
    first = render_machine_pages(renderer, SLUGS, cache)
    pages = renderer.chart_book.resolve(first.pages)
    store_machine_pages(pages, first.rendered, cache)
    for path, text in pages.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    record_written(first.keys, cache)
    page = stamped_sources(docs) / machine_fragment("a-box")

    second = render_machine_pages(PageRenderer(data, docs), SLUGS, cache)
    assert second.kept == {page} and second.pages == {} and second.rendered == {}
    assert second.keys == first.keys

    page.write_text(page.read_text() + "edited by hand\n")
    third = render_machine_pages(PageRenderer(data, docs), SLUGS, cache)
    assert third.kept == set() and third.rendered == {}
    assert third.pages == {page: pages[page]}


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.mark.slow
def test_pages_rendered_in_workers_are_the_pages_rendered_in_one_process(
    tmp_path: Path, write_run: RunWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    results, data = tmp_path / "results", tmp_path / "data"
    for number in range(4):
        write_run(results, f"box-{number}", sweep(1.0 + number / 4), profile="full")
    aggregate_all(results_dir=results, out_dir=data)
    one_process = tmp_path / "one-process"
    pages, rendered = render(data, one_process, tmp_path / "cache-one")
    for path, text in pages.items():
        write_if_changed(path, text)
    assert len(rendered) == 4

    monkeypatch.setattr(page_cache_module, "MIN_PAGES_FOR_WORKERS", 2)
    monkeypatch.setattr(page_cache_module.os, "cpu_count", lambda: 2)
    in_workers = tmp_path / "workers"
    renderer = PageRenderer(data, in_workers)
    machine_pages = render_machine_pages(renderer, SLUGS, tmp_path / "cache-workers")
    assert machine_pages.pages == {} and len(machine_pages.kept) == len(machine_pages.written) == 4
    assert renderer.chart_book.files == {
        in_workers / path.relative_to(one_process) for path in one_process.glob("charts/*")
    }
    assert _tree(in_workers) == _tree(one_process)
    assert _tree(stamped_sources(in_workers)) == _tree(stamped_sources(one_process))
    # The workers stored each page in the cache: the next render reads them back.
    monkeypatch.setattr(page_cache_module, "MIN_PAGES_FOR_WORKERS", 10_000)
    again = render_machine_pages(PageRenderer(data, in_workers), SLUGS, tmp_path / "cache-workers")
    assert again.rendered == {}
    assert again.pages == {
        stamped_sources(in_workers) / path.relative_to(stamped_sources(one_process)): text
        for path, text in pages.items()
    }


def test_the_verdicts_hashed_once_per_article_are_those_of_every_machines_table(tmp_path: Path) -> None:
    """A page's key hashes the published parts of its verdict table once per article, from the article's
    table without a machine: they must be what each machine's own table holds."""
    renderer = PageRenderer(FACTS_BEFORE, tmp_path / "docs")
    measured = [str(m["id"]) for m in renderer.machines if not m.get("published")]
    slugs = [path.stem for path in (FACTS_BEFORE / "claims").glob("*.json")]
    assert measured and slugs
    compared = 0
    for slug in slugs:
        across = shared_verdicts(renderer.verdict_table(slug))
        for machine in measured:
            assert shared_verdicts(renderer.verdict_table(slug, machine)) == across, (slug, machine)
            compared += any(across["source_cells"])
    assert compared, "the fixture's articles have a published source whose verdicts the tables show"


def test_a_machines_key_follows_its_own_verdicts_and_what_every_page_shares(tmp_path: Path) -> None:
    """A page's key takes the machine's own verdicts and what every machine's table shares: another machine's
    verdict leaves it alone, its own or a published set's changes it."""
    data = tmp_path / "data"
    shutil.copytree(FACTS_BEFORE, data)
    slug = "too-many-connections"
    claims_path = data / "claims" / f"{slug}.json"
    first = json.loads(claims_path.read_text())

    def inputs() -> dict[str, str]:
        renderer = PageRenderer(data, tmp_path / "docs")
        measured = [str(m["id"]) for m in renderer.machines if not m.get("published")]
        return {machine: canonical_json(renderer.machine_inputs(slug, machine)) for machine in measured}

    def with_verdict(machine: str, verdict: str) -> None:
        edited = json.loads(json.dumps(first))
        claim = next(c for c in edited["claims"] if c.get("scope") != "across")
        next(v for v in claim["verdicts"] if v["machine"] == machine)["verdict"] = verdict
        claims_path.write_text(json.dumps(edited))

    before = inputs()
    own, other = sorted(before)[:2]
    with_verdict(own, "inconclusive")
    after = inputs()
    assert after[own] != before[own] and after[other] == before[other]
    with_verdict(first["source"], "inconclusive")
    after = inputs()
    assert after[own] != before[own] and after[other] != before[other]
