"""connlab.contract.yaml_models: a contributed YAML text (machine.yaml) whose shape would make a reader
recurse without end (thousands of levels, aliases of aliases, an alias inside its own node) is refused with
its line, before anything walks it."""

from __future__ import annotations

import pytest
import yaml

from connlab.contract.yaml_models import (
    MAX_YAML_DEPTH,
    MAX_YAML_VALUES,
    YamlShapeRefused,
    load_contributed_yaml,
    parse_yaml,
)


def nested(depth: int) -> str:
    """A flow sequence `depth` levels deep, on the second line of the text."""
    return "id: x\nvalue: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"


def refusal(text: str) -> YamlShapeRefused:
    with pytest.raises(YamlShapeRefused) as raised:
        parse_yaml(text, contributed=True)
    return raised.value


def test_a_text_nested_to_the_limit_is_read() -> None:
    root, data = parse_yaml(nested(MAX_YAML_DEPTH), contributed=True)
    assert root is not None
    assert isinstance(data, dict) and data["id"] == "x"


@pytest.mark.parametrize(
    "text",
    [
        nested(MAX_YAML_DEPTH + 1),
        nested(5_000),
        # Block sequences, two characters a level: tens of thousands of levels in a small file took libyaml's
        # composer past the C stack, a crash of the process rather than an error.
        "id: x\nvalue:\n" + "- " * 30_000 + "x\n",
        "id: x\nvalue: " + "{a: " * 5_000 + "1" + "}" * 5_000 + "\n",
    ],
    ids=["one-past-the-limit", "flow-sequences", "block-sequences", "flow-mappings"],
)
def test_a_text_nested_deeper_is_refused_with_its_line(text: str) -> None:
    error = refusal(text)
    assert error.problem == f"nested deeper than {MAX_YAML_DEPTH} levels"
    assert error.problem_mark is not None
    assert error.problem_mark.line + 1 in (2, 3)


def test_aliases_that_nest_deeper_than_the_text_are_refused() -> None:
    """Each level an alias of the one before: two levels deep as written, two hundred as read."""
    lines = ["level0: &level0 [x]"] + [f"level{n}: &level{n} [*level{n - 1}]" for n in range(1, 200)]
    assert refusal("\n".join(lines) + "\n").problem == f"nested deeper than {MAX_YAML_DEPTH} levels"


def test_aliases_that_stand_for_a_billion_values_are_refused() -> None:
    levels = ", ".join(
        f"&l{level} [" + ", ".join(["x" if level == 0 else f"*l{level - 1}"] * 10) + "]" for level in range(9)
    )
    error = refusal(f"id: x\nvalue: [{levels}]\n")
    assert error.problem == f"its aliases stand for more than {MAX_YAML_VALUES} values"
    assert error.problem_mark is not None and error.problem_mark.line == 1


def test_an_alias_inside_the_node_it_names_is_refused() -> None:
    error = refusal("id: x\nvalue: &loop [*loop]\n")
    assert error.problem == "an alias inside the node it names: data that holds itself"


def test_aliases_within_the_limits_are_read() -> None:
    _, data = parse_yaml("base: &base {cores: 2}\nmachine: {<<: *base, threads: 4}\n", contributed=True)
    assert data == {"base": {"cores": 2}, "machine": {"cores": 2, "threads": 4}}


def test_load_contributed_yaml_reads_what_safe_load_reads() -> None:
    text = "id: box\ncores: 2\nflags: [a, b]\nwhen: 2026-01-01T00:00:00Z\n"
    assert load_contributed_yaml(text) == yaml.safe_load(text)
    with pytest.raises(YamlShapeRefused):
        load_contributed_yaml(nested(5_000))
