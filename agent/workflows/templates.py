"""Rendering workflow templates in jinja2's sandbox, with undefined names as errors.

A template that reaches for an unsafe attribute (`__class__`, a mutating method...) or a name
or field that does not exist raises `TemplateFailure`; the step fails with it, never the
process. The filter names added here are mirrored by the backend's start-up check
(backend/workflows/templates.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jinja2 import StrictUndefined, TemplateError, Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment

MAX_RENDERED_CHARS = 100_000
_INTEGER = re.compile(r"(?<![\w.])\d{1,10}(?!\w|\.\d)")  # "dashboard 42." but not "v1.2"
# A table name of two characters or more, so "e.g." is not taken for one.
_TABLE_REF = re.compile(r"\b([A-Za-z][A-Za-z0-9_-]{0,63}\.[A-Za-z_][A-Za-z0-9_]{1,62})\b")
_ONE_EXPRESSION = re.compile(r"^\s*\{\{(?P<expr>(?:(?!\}\}|\{\{).)*)\}\}\s*$", re.DOTALL)


class TemplateFailure(Exception):
    """A template that could not be rendered; the message says why (safe to show)."""


def _number(value: Any) -> int:
    """The first whole number in `value` (e.g. 42 in "check dashboard 42")."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _INTEGER.search(str(value))
    if match is None:
        raise TemplateFailure(f"no number found in {str(value)[:80]!r}")
    return int(match.group())


def _table_ref(value: Any) -> str:
    """The first `datasource.table` in `value`."""
    match = _TABLE_REF.search(str(value))
    if match is None:
        raise TemplateFailure(f"no datasource.table found in {str(value)[:80]!r}")
    return match.group(1)


class _Sandbox(ImmutableSandboxedEnvironment):
    """The sandbox (immutable: a template cannot change a step's result), where `x.field` on
    a mapping means its key first (so a tool result's `items` is the list, not the method)."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, Mapping) and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)


def environment() -> SandboxedEnvironment:
    """A fresh sandboxed environment with StrictUndefined and our filters."""
    env = _Sandbox(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
    env.filters["number"] = _number
    env.filters["table_ref"] = _table_ref
    return env


FILTERS = frozenset({"number", "table_ref"})


class Renderer:
    """Renders templates against one run's context (`input`, `steps`, `now`, `today`)."""

    def __init__(self, context: dict[str, Any]) -> None:
        self.env = environment()
        self.context = context

    def text(self, source: str) -> str:
        """`source` rendered to text."""
        try:
            rendered = self.env.from_string(source).render(self.context)
        except TemplateFailure:
            raise
        except TemplateError as exc:
            raise TemplateFailure(_reason(exc)) from exc
        return rendered[:MAX_RENDERED_CHARS]

    def value(self, source: Any) -> Any:
        """A parameter's value: a lone `{{ expression }}` keeps its type (a number stays a
        number); other strings render to text; lists and mappings are rendered item by item."""
        if isinstance(source, dict):
            return {key: self.value(item) for key, item in source.items()}
        if isinstance(source, list):
            return [self.value(item) for item in source]
        if not isinstance(source, str):
            return source
        lone = _ONE_EXPRESSION.match(source)
        if lone is None:
            return self.text(source)
        try:
            result = self.env.compile_expression(lone.group("expr"), undefined_to_none=False)(
                **self.context
            )
            if isinstance(result, Undefined):
                str(result)  # StrictUndefined raises here, naming what is missing
        except TemplateFailure:
            raise
        except TemplateError as exc:
            raise TemplateFailure(_reason(exc)) from exc
        return result


def _reason(exc: TemplateError) -> str:
    text = " ".join(str(exc.message or exc).split())
    return f"template error: {text[:300]}"
