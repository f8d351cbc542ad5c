"""Load a YAML file into a pydantic model, with errors as one line: `path:line: field: what is wrong`.

YAML is only ever safe-loaded: a contributed file is data, never code.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from connlab.errors import LabError

Model = TypeVar("Model", bound=BaseModel)


def _line_of(node: yaml.Node | None, location: tuple[int | str, ...]) -> int | None:
    """Walk the composed YAML tree along a pydantic error location to find the 1-based line."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in location:
        if isinstance(node, yaml.MappingNode):
            match = next((value for k, value in node.value if k.value == key), None)
            if match is None:
                key_node = next((k for k, _ in node.value if k.value == key), None)
                return key_node.start_mark.line + 1 if key_node is not None else line
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            break
        line = node.start_mark.line + 1
    return line


def _data_location(data: object, location: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """Keep the parts of pydantic's location that exist in the file: a union field's branches (such
    as `cpu_budget.float`) are pydantic's, not the reader's. An unknown key is kept: it is the file's."""
    kept: list[int | str] = []
    node = data
    for part in location:
        if isinstance(node, dict) and part not in node:
            kept.append(part)  # a missing required key or an unknown key: still the file's words
            break
        in_list = isinstance(node, list) and isinstance(part, int) and part < len(node)
        if not (isinstance(node, dict) or in_list):
            break  # past a scalar: the rest names pydantic's union branches
        node = node[part]
        kept.append(part)
    return tuple(kept)


def duplicate_key_problems(path: Path, root: yaml.Node | None, where: str = "") -> list[str]:
    """Keys given twice in one mapping. YAML loaders keep the last one silently, so `cores: 2` and a
    later `cores: 64` would pass as 64; here each repeat is an error naming both lines."""
    problems: list[str] = []
    if isinstance(root, yaml.MappingNode):
        first_line: dict[str, int] = {}
        for key, value in root.value:
            name = f"{where}.{key.value}" if where else str(key.value)
            line = key.start_mark.line + 1
            if key.value in first_line:
                problems.append(
                    f"{path}:{line}: {name}: given twice (first on line {first_line[key.value]}); keep one"
                )
            else:
                first_line[key.value] = line
            problems.extend(duplicate_key_problems(path, value, name))
    elif isinstance(root, yaml.SequenceNode):
        for index, item in enumerate(root.value):
            problems.extend(duplicate_key_problems(path, item, f"{where}.{index}" if where else str(index)))
    return problems


def format_validation_error(
    path: Path, error: ValidationError, root: yaml.Node | None, data: object = None
) -> list[str]:
    problems: dict[tuple[int, str], list[str]] = {}
    for problem in error.errors():
        location = _data_location(data, tuple(problem["loc"]))
        field = ".".join(str(part) for part in location) or "(top level)"
        message = problem["msg"]
        if problem["type"] == "extra_forbidden":
            message = "unknown key (check the spelling; allowed keys are in the schema)"
        elif "input" in problem and not isinstance(problem["input"], dict | list):
            message += f" (got {problem['input']!r})"
        key = (_line_of(root, location) or 1, field)
        if message not in problems.setdefault(key, []):
            problems[key].append(message)
    return [f"{path}:{line}: {field}: {'; or '.join(texts)}" for (line, field), texts in problems.items()]


# libyaml where PyYAML was built with it: much faster than pure Python, and every spec and machine file is
# read per build.
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Deeper than any file of the project's nests, and far below the depth at which a walk over a file's nodes
# exceeds Python's recursion limit (a traceback) or libyaml's composer the C stack (a crash): PyYAML's
# composer, the duplicate-key check and pydantic all recurse once per level.
MAX_YAML_DEPTH = 100
# Values a text may stand for with its aliases expanded: a few lines of aliases of aliases stand for a
# billion, which every walk over the data would visit one by one.
MAX_YAML_VALUES = 100_000
# Each collection of a text opens at one of these characters (a flow bracket, a block entry, a key's
# indicator), so a text with fewer of them nests no deeper than that, and its nesting need not be measured.
COLLECTION_OPENERS = "[{-:?"
# An anchor's `&` and its name's first character: a text with none has no alias to follow.
ANCHOR = re.compile(r"&[^\s,\[\]{}]")


class YamlShapeRefused(yaml.MarkedYAMLError):
    """A text nested deeper than MAX_YAML_DEPTH, standing for more than MAX_YAML_VALUES values through its
    aliases, or holding itself: refused with its line before anything walks its nodes."""

    def __init__(self, problem: str, mark: yaml.Mark | None) -> None:
        super().__init__(problem=problem, problem_mark=mark)


def _refuse_deep_nesting(text: str, loader: type) -> None:
    """Count the levels as the parser's events open and close them, which takes no recursion."""
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise YamlShapeRefused(f"nested deeper than {MAX_YAML_DEPTH} levels", event.start_mark)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _refuse_large_alias_graph(root: yaml.Node) -> None:
    """Follow the aliases, which share nodes (and may hold their own anchor's node): the depth and the count
    of values of the data they stand for, each node's measured once, without recursion."""
    measured: dict[int, tuple[int, int]] = {}  # a node's id: its depth and its values, aliases expanded
    open_nodes: set[int] = set()
    stack: list[yaml.Node] = [root]
    while stack:
        node = stack[-1]
        if id(node) in measured:
            stack.pop()
            continue
        children = _children(node)
        if id(node) not in open_nodes:
            open_nodes.add(id(node))
            for child in children:
                if id(child) in open_nodes:
                    raise YamlShapeRefused(
                        "an alias inside the node it names: data that holds itself", child.start_mark
                    )
            stack += [child for child in children if id(child) not in measured]
            continue
        stack.pop()
        open_nodes.discard(id(node))
        depth = 1 + max((measured[id(child)][0] for child in children), default=0)
        values = 1 + sum(measured[id(child)][1] for child in children)
        if depth > MAX_YAML_DEPTH:
            raise YamlShapeRefused(f"nested deeper than {MAX_YAML_DEPTH} levels", node.start_mark)
        if values > MAX_YAML_VALUES:
            raise YamlShapeRefused(
                f"its aliases stand for more than {MAX_YAML_VALUES} values", node.start_mark
            )
        measured[id(node)] = (depth, values)


def _parse(text: str, loader: type, contributed: bool) -> tuple[yaml.Node | None, object]:
    """The node tree (for line numbers and duplicate keys) and the data. A contributed text whose shape could
    make the composer or a walk over its nodes recurse without end is refused (YamlShapeRefused) first."""
    may_nest_deeply = contributed and sum(map(text.count, COLLECTION_OPENERS)) > MAX_YAML_DEPTH
    if may_nest_deeply:
        _refuse_deep_nesting(text, loader)
    root = yaml.compose(text, Loader=loader)
    # Without an anchor there is no alias, and the nodes nest as deep as the text, measured above.
    if contributed and root is not None and ANCHOR.search(text):
        _refuse_large_alias_graph(root)
    return root, yaml.load(text, Loader=loader)


def parse_yaml(text: str, contributed: bool = False) -> tuple[yaml.Node | None, object]:
    """The node tree and the data, read by libyaml; a text it refuses is parsed again by PyYAML's own
    parser, whose error (wording and mark) is the one raised, as readers have always seen it. contributed:
    a file of results/ (machine.yaml), whose shape is checked first. The project's own files (experiments'
    specs, articles' claims), read on every build, are code, reviewed as code: checking theirs would read
    each of them twice more."""
    try:
        return _parse(text, FAST_LOADER, contributed)
    except YamlShapeRefused:
        raise
    except yaml.YAMLError:
        return _parse(text, yaml.SafeLoader, contributed)


def load_contributed_yaml(text: str) -> object:
    """The data of a contributed text (parse_yaml's, its shape checked first), read by libyaml; composed as a
    node tree only where its shape needs checking, which a machine.yaml's does not."""
    if sum(map(text.count, COLLECTION_OPENERS)) > MAX_YAML_DEPTH or ANCHOR.search(text):
        return parse_yaml(text, contributed=True)[1]
    return yaml.load(text, Loader=FAST_LOADER)


def load_yaml_model(path: Path, model: type[Model]) -> Model:
    """Parse and validate; raise LabError whose message has one line per problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        raise LabError(f"{path}: file not found") from error
    except UnicodeDecodeError as error:
        raise LabError(f"{path}:1: (file): not UTF-8 text") from error
    try:
        root, data = parse_yaml(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        reason = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise LabError(f"{path}:{line}: (yaml): {reason}") from error
    duplicates = duplicate_key_problems(path, root)
    if duplicates:
        raise LabError("\n".join(duplicates))
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as error:
        raise LabError("\n".join(format_validation_error(path, error, root, data))) from error
