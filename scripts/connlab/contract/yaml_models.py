"""Load a YAML file into a pydantic model, with errors as one line: `path:line: field: what is wrong`.

YAML is only ever safe-loaded: a contributed file is data, never code.
"""

from __future__ import annotations

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


# libyaml where PyYAML was built with it: ten times faster, and every spec and machine file is read per build.
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse(text: str, loader: type) -> tuple[yaml.Node | None, object]:
    """The node tree (for line numbers and duplicate keys) and the data."""
    return yaml.compose(text, Loader=loader), yaml.load(text, Loader=loader)


def parse_yaml(text: str) -> tuple[yaml.Node | None, object]:
    """The node tree and the data, read by libyaml; a text it refuses is parsed again by PyYAML's own
    parser, whose error (wording and mark) is the one raised, as readers have always seen it."""
    try:
        return _parse(text, FAST_LOADER)
    except yaml.YAMLError:
        return _parse(text, yaml.SafeLoader)


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
