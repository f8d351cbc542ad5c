"""The articles' scripts as highlighted blocks: a stamped page holds a placeholder per block
(connlab.site.layout.CODE_PLACEHOLDER) that publishing replaces with the block written here, converted by
the Markdown extensions mkdocs.yml names, under a key of its text and of the converter.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
from pathlib import Path

from connlab.contract.cache import canonical_json, digest
from connlab.contract.files import write_if_changed
from connlab.site.layout import CODE_BLOCKS_SUBDIR, FRAGMENT_SUFFIX, code_block
from connlab.site.render.fragments import FragmentConverter, markdown_extensions

# Pygments writes each run of whitespace between a script's words in a span of its own (class "w",
# Token.Text.Whitespace) that no stylesheet colours, Material's nor the site's: in four-poolers' longest
# script those spans were a third of the block, and its page was over issue 54's 600 KB of HTML. Written bare,
# the block shows and copies the same text.
_WHITESPACE_SPAN = re.compile(r'<span class="w">(\s*)</span>')
# Part of a block's key (code_converter_key): a block highlighted before the whitespace was written bare is
# highlighted again.
HIGHLIGHT_FORM = "whitespace bare"


def without_whitespace_spans(block: str) -> str:
    """A highlighted block with its whitespace tokens' spans taken off (their text kept)."""
    return _WHITESPACE_SPAN.sub(r"\1", block)


@functools.cache
def code_converter_key() -> str:
    """What a highlighted block is made with besides its text: the Markdown extensions mkdocs.yml names, with
    their options, the versions of the libraries that convert and highlight it, and what is done after."""
    versions = [importlib.metadata.version(name) for name in ("markdown", "pymdown-extensions", "pygments")]
    return digest(canonical_json(markdown_extensions()), *versions, HIGHLIGHT_FORM)


def write_code_blocks(blocks: dict[str, str], stamped: Path) -> None:
    """Each block the articles name, highlighted by the Markdown extensions mkdocs.yml names (as MkDocs would
    have converted it, its whitespace written bare), where its file is missing: a file there is the same block
    from the same converter, since the key names both. Blocks no article names any more are removed."""
    converter: FragmentConverter | None = None
    for key, fence in blocks.items():
        path = stamped / code_block(key)
        if not path.is_file():
            converter = converter or FragmentConverter(exists=lambda page: False)
            write_if_changed(path, without_whitespace_spans(converter.convert("", fence)))
    named = {stamped / code_block(key) for key in blocks}
    for stale in set((stamped / CODE_BLOCKS_SUBDIR).glob(f"*{FRAGMENT_SUFFIX}")) - named:
        stale.unlink()
