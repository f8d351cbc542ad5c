"""connlab.data.csv_runs: a machine's run of lines in a CSV sorted by machine, replaced, added or removed."""

from __future__ import annotations

from connlab.data.csv_runs import one_line_each, replace_runs, splice_runs


def test_runs_of_changed_machines_are_replaced_added_and_removed() -> None:
    body = b"a,1\na,2\nb,1\nd,1\nd,2\nf,1\n"
    rows = b"b,7\nb,8\nc,1\n"
    # b edited, c added, d removed (no rows), and machines past the last line and before the first.
    spliced = replace_runs(body, rows, [b"0", b"b", b"c", b"d", b"z"])
    assert spliced == b"a,1\na,2\nb,7\nb,8\nc,1\nf,1\n"
    assert replace_runs(b"", b"m,1\n", [b"m"]) == b"m,1\n"
    assert replace_runs(b"m,1\n", b"", [b"m"]) == b""


def test_a_splice_of_a_file_keeps_its_header_and_counts_the_lines_it_swaps() -> None:
    data = b"machine,x\na,1\nb,1\nb,2\nc,1\n"
    start = data.index(b"\n") + 1
    splice = splice_runs(data, start, b"b,9\n", [b"b"])
    assert data[:start] + b"".join(splice.pieces) == b"machine,x\na,1\nb,9\nc,1\n"
    assert (splice.lines_removed, splice.lines_added, splice.changed) == (2, 1, True)
    # The header is never read as a machine's line, even one that sorts among the machines.
    assert b"".join(splice_runs(data, start, b"machine,0\n", [b"machine"]).pieces).startswith(b"a,1\n")


def test_a_splice_that_writes_the_same_runs_is_unchanged() -> None:
    data = b"a,1\nb,1\nb,2\n"
    splice = splice_runs(data, 0, b"b,1\nb,2\n", [b"b", b"x"])
    assert not splice.changed
    assert b"".join(splice.pieces) == data
    assert (splice.lines_removed, splice.lines_added) == (2, 2)


def test_a_row_over_two_lines_is_seen_by_its_quotes() -> None:
    assert one_line_each(b"a,1\nb,2\n")
    assert one_line_each(b'a,"x, ""quoted"" y"\nb,2\n')
    assert not one_line_each(b'a,"x\ny"\nb,2\n')
