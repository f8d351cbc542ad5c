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


def format_validation_error(path: Path, error: ValidationError, root: yaml.Node | None) -> list[str]:
    lines = []
    for problem in error.errors():
        location = tuple(part for part in problem["loc"] if not isinstance(part, str) or part[:1] != "[")
        field = ".".join(str(part) for part in location) or "(top level)"
        message = problem["msg"]
        if problem["type"] == "extra_forbidden":
            message = "unknown key (check the spelling; allowed keys are in the schema)"
        elif "input" in problem and not isinstance(problem["input"], dict | list):
            message += f" (got {problem['input']!r})"
        lines.append(f"{path}:{_line_of(root, location) or 1}: {field}: {message}")
    return lines


def load_yaml_model(path: Path, model: type[Model]) -> Model:
    """Parse and validate; raise LabError whose message has one line per problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        raise LabError(f"{path}: file not found") from error
    except UnicodeDecodeError as error:
        raise LabError(f"{path}:1: (file): not UTF-8 text") from error
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        reason = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise LabError(f"{path}:{line}: (yaml): {reason}") from error
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as error:
        raise LabError("\n".join(format_validation_error(path, error, root))) from error
