"""Writing build outputs only when they change, so an unchanged file keeps its time and later stages
(make's stamps, MkDocs, `mkdocs serve`) see nothing to redo."""

from __future__ import annotations

from pathlib import Path


def write_bytes_if_changed(path: Path, data: bytes) -> bool:
    """Write data to path unless it already holds exactly that; True when it wrote.

    Written to a temporary name and renamed: a server reading the folder never sees half a file."""
    if path.is_file() and path.read_bytes() == data:
        return False
    write_bytes_whole(path, data)
    return True


def write_bytes_whole(path: Path, data: bytes) -> None:
    """Write data to a temporary name and rename it to path: a reader never sees half a file."""
    write_pieces_whole(path, [data])


def write_pieces_whole(path: Path, pieces: list[memoryview | bytes]) -> None:
    """write_bytes_whole of the pieces one after the other, without joining them into one copy first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("wb") as file:
        file.writelines(pieces)
    temporary.replace(path)


def write_if_changed(path: Path, text: str) -> bool:
    return write_bytes_if_changed(path, text.encode("utf-8"))


def copy_if_changed(source: Path, target: Path) -> bool:
    return write_bytes_if_changed(target, source.read_bytes())
