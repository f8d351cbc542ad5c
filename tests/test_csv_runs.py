"""connlab.data.csv_runs: a machine's run of lines in a CSV sorted by machine, replaced, added or removed."""

from __future__ import annotations

from connlab.data.csv_runs import one_line_each, replace_runs


def test_runs_of_changed_machines_are_replaced_added_and_removed() -> None:
    body = b"a,1\na,2\nb,1\nd,1\nd,2\nf,1\n"
    rows = b"b,7\nb,8\nc,1\n"
    # b edited, c added, d removed (no rows), and machines past the last line and before the first.
    spliced = replace_runs(body, rows, [b"0", b"b", b"c", b"d", b"z"])
    assert spliced == b"a,1\na,2\nb,7\nb,8\nc,1\nf,1\n"
    assert replace_runs(b"", b"m,1\n", [b"m"]) == b"m,1\n"
    assert replace_runs(b"m,1\n", b"", [b"m"]) == b""


def test_a_row_over_two_lines_is_seen_by_its_quotes() -> None:
    assert one_line_each(b"a,1\nb,2\n")
    assert one_line_each(b'a,"x, ""quoted"" y"\nb,2\n')
    assert not one_line_each(b'a,"x\ny"\nb,2\n')
