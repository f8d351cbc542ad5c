"""How numbers and contributed text look on the page: the filters the templates and the table builders use."""

from __future__ import annotations

import functools
import html
import math
import re


def is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def number(value: object, digits: int = 0) -> str:
    """Thousands separated; digits after the point."""
    if is_missing(value):
        return "–"
    return f"{float(value):,.{digits}f}"  # type: ignore[arg-type]


def significant(value: object, figures: int = 3) -> str:
    """A few significant figures, for values that span orders of magnitude (latency in ms)."""
    if is_missing(value):
        return "–"
    number_value = float(value)  # type: ignore[arg-type]
    if number_value == 0:
        return "0"
    digits = max(0, figures - 1 - math.floor(math.log10(abs(number_value))))
    return f"{number_value:,.{digits}f}"


def plural(word: str, count: object, plural_form: str | None = None) -> str:
    """The word as its number needs it: singular for exactly one (1, 1.0), plural otherwise (0.5 cores, 2
    machines); the plural is the word with an s unless given. `{{ "core" | plural(n) }}` in a template."""
    one = not is_missing(count) and float(count) == 1  # type: ignore[arg-type]
    return word if one else (plural_form or word + "s")


def percent(value: object, digits: int = 0) -> str:
    return "–" if is_missing(value) else f"{100 * float(value):.{digits}f}%"  # type: ignore[arg-type]


MARKDOWN_SYNTAX = re.compile(r"([\\`*_{}\[\]()#+!|-])")


def plain_text(value: object) -> str:
    """Contributed text shown literally: HTML escaped, Markdown and Jinja syntax neutralised."""
    return _plain(value if isinstance(value, str) else str(value))


# A thousand machine pages show the same few texts (workloads, poolers, reasons) some forty thousand times.
@functools.lru_cache(maxsize=4096)
def _plain(text: str) -> str:
    one_line = " ".join(text.split())  # a blank line or indent would start a Markdown block
    markdown_safe = MARKDOWN_SYNTAX.sub(r"\\\1", one_line)
    # Jinja never sees this text as a template; HTML escaping last keeps every tag and entity literal.
    return html.escape(markdown_safe, quote=False)
