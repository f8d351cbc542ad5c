"""The articles' scripts as converted blocks: a stamped page holds a placeholder per block
(connlab.site.layout.CODE_PLACEHOLDER) that publishing replaces with the block written here, converted by
the Markdown extensions mkdocs.yml names, under a key of its text and of the converter. The scripts are
fenced as plain text (site_src/partials/_check_it_yourself.md.j2 says why), so the block is one <code> of
escaped text, not a span per word.
"""

from __future__ import annotations

import functools
import importlib.metadata
from pathlib import Path

from connlab.contract.cache import canonical_json, digest
from connlab.contract.files import write_if_changed
from connlab.site.layout import CODE_BLOCKS_SUBDIR, FRAGMENT_SUFFIX, code_block
from connlab.site.render.fragments import FragmentConverter, markdown_extensions


@functools.cache
def code_converter_key() -> str:
    """What a converted block is made with besides its text: the Markdown extensions mkdocs.yml names, with
    their options, and the versions of the libraries that convert it."""
    versions = [importlib.metadata.version(name) for name in ("markdown", "pymdown-extensions", "pygments")]
    return digest(canonical_json(markdown_extensions()), *versions)


def write_code_blocks(blocks: dict[str, str], stamped: Path) -> None:
    """Each block the articles name, converted by the Markdown extensions mkdocs.yml names (as MkDocs would
    have converted it), where its file is missing: a file there is the same block from the same converter,
    since the key names both. Blocks no article names any more are removed."""
    converter: FragmentConverter | None = None
    for key, fence in blocks.items():
        path = stamped / code_block(key)
        if not path.is_file():
            converter = converter or FragmentConverter(exists=lambda page: False)
            write_if_changed(path, converter.convert("", fence))
    named = {stamped / code_block(key) for key in blocks}
    for stale in set((stamped / CODE_BLOCKS_SUBDIR).glob(f"*{FRAGMENT_SUFFIX}")) - named:
        stale.unlink()
