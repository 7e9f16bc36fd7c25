"""The dashboard definition schema, and how a commit's chart edits (add / update / remove) apply
to it. The edits' models are the agent's own `commit_changes` arguments (common/tool_arguments.py):
one schema for the tool, the card and this API."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from common.tool_arguments import (
    MAX_CHANGES,
    AddChart,
    Change,
    Chart,
    ChartPatch,
    RemoveChart,
    UpdateChart,
    check_distinct,
    query_fields,
)

__all__ = [
    "AddChart",
    "Change",
    "Changes",
    "Chart",
    "ChartPatch",
    "Definition",
    "EditError",
    "RemoveChart",
    "UpdateChart",
    "apply_changes",
]

MAX_CHARTS = 30


class Definition(BaseModel):
    model_config = ConfigDict(extra="forbid")

    charts: Annotated[list[Chart], Field(max_length=MAX_CHARTS)]

    @model_validator(mode="after")
    def _distinct_keys(self) -> Definition:
        check_distinct([c.key for c in self.charts], "chart key")
        return self


Changes = Annotated[list[Change], Field(min_length=1, max_length=MAX_CHANGES)]


class EditError(ValueError):
    """A change that does not apply to the definition; `change` is its index in the list."""

    def __init__(self, change: int, message: str) -> None:
        super().__init__(message)
        self.change = change
        self.message = message


def _index(charts: list[dict[str, Any]], key: str) -> int | None:
    return next((i for i, c in enumerate(charts) if c["key"] == key), None)


def apply_changes(definition: dict[str, Any], changes: list[Change]) -> dict[str, Any]:
    """Apply `changes` in order to a copy of `definition`; raise EditError on the first misfit."""
    charts = [dict(c) for c in definition.get("charts", [])]
    for i, change in enumerate(changes):
        if isinstance(change, AddChart) and not isinstance(change.chart, Chart):
            raise EditError(i, "a built-in chart is added with key, type, datasource and sql")
        if isinstance(change, UpdateChart) and query_fields(change.chart):
            raise EditError(
                i, f"a built-in chart has no {', '.join(sorted(query_fields(change.chart)))}"
            )
        if isinstance(change, AddChart):
            assert isinstance(change.chart, Chart)
            if _index(charts, change.chart.key) is not None:
                raise EditError(i, f"chart key already exists: {change.chart.key}")
            charts.append(change.chart.model_dump())
            continue
        at = _index(charts, change.key)
        if at is None:
            raise EditError(i, f"no chart with key: {change.key}")
        if isinstance(change, UpdateChart):
            charts[at] = {**charts[at], **change.chart.model_dump(exclude_unset=True)}
        else:
            del charts[at]
    if len(charts) > MAX_CHARTS:
        raise EditError(len(changes) - 1, f"a dashboard holds at most {MAX_CHARTS} charts")
    return {"charts": charts}
