"""Loading `workflows/*.yaml` at start-up: every file validated, a bad one named with its field."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from backend.workflows.definition import WorkflowDefinition


class DefinitionError(ValueError):
    """A workflow file that cannot be used; the message names the file and the field."""


def load(folder: Path) -> list[WorkflowDefinition]:
    """Every `*.yaml` / `*.yml` file of `folder`, in file-name order; a missing folder is none."""
    if not folder.is_dir():
        return []
    files = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])
    definitions: list[WorkflowDefinition] = []
    owners: dict[str, Path] = {}
    for path in files:
        definition = _load_one(path)
        if definition.name in owners:
            raise DefinitionError(
                f"{path}: name: {definition.name!r} is already defined in {owners[definition.name]}"
            )
        owners[definition.name] = path
        definitions.append(definition)
    return definitions


def _load_one(path: Path) -> WorkflowDefinition:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise DefinitionError(f"{path}: not a readable YAML file: {_short(exc)}") from exc
    if not isinstance(data, dict):
        raise DefinitionError(f"{path}: the file must hold one mapping (name, steps, ...)")
    try:
        return WorkflowDefinition.model_validate(data)
    except ValidationError as exc:
        raise DefinitionError(f"{path}: {_first_problem(exc)}") from exc


def _first_problem(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_input=False, include_url=False)[:3]:
        # A discriminated union adds the step type to the location: leave it out.
        parts = [str(p) for p in error["loc"] if p not in ("tool_call", "llm_call")]
        where = ".".join(parts)
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems)


def _short(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300]
