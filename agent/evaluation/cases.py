"""The case file of `agent-chat eval`: one JSON object a line, checked strictly before anything
runs, so a typo in a case is an error naming its line rather than a silently wrong score.

A line: `{"query", "expected_tools": [...], "lang": "ru"|"en", "focus"?, "history"?}`.
`focus` is what the person is looking at (the chat's `focus` input, e.g.
`{"kind": "dashboard", "id": 42}`); `history` is the conversation before the query, a list of
`{"role": "user"|"assistant", "content"}` turns given to the agent as they are.
Blank lines are skipped. This module is light (no LangChain) so a bad file fails fast.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.tools.names import TOOL_NAMES

MAX_QUERY_CHARS = 10_000
MAX_FOCUS_CHARS = 2000  # as the chat's focus input (agent/inputs.py)
MAX_HISTORY_TURNS = 20
Lang = Literal["ru", "en"]


class CaseFileError(Exception):
    """The case file cannot be used; `str()` names the file, the line and the problem."""


class CaseTurn(BaseModel):
    """One earlier message of the conversation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)


class Case(BaseModel):
    """One request and the tools a good agent uses for it (compared as a set)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    expected_tools: tuple[str, ...]
    lang: Lang
    focus: dict[str, Any] | None = None
    history: tuple[CaseTurn, ...] = Field(default=(), max_length=MAX_HISTORY_TURNS)

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("expected_tools")
    @classmethod
    def _known_tools(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [name for name in value if name not in TOOL_NAMES]
        if unknown:
            raise ValueError(f"unknown tool {unknown[0]!r} (the tools are CONTRACT.md's)")
        repeated = sorted({name for name in value if value.count(name) > 1})
        if repeated:
            raise ValueError(
                f"{repeated[0]!r} is listed twice; tools are compared as a set, list each once"
            )
        return value

    @field_validator("focus")
    @classmethod
    def _focus(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value.get("kind"), str):
            raise ValueError('needs a "kind", e.g. {"kind": "dashboard", "id": 42}')
        if len(json.dumps(value, ensure_ascii=False)) > MAX_FOCUS_CHARS:
            raise ValueError(f"must be at most {MAX_FOCUS_CHARS} characters of JSON")
        return value


@dataclass(frozen=True)
class NumberedCase:
    """A case and where it came from, for the report."""

    source: str
    line: int
    case: Case

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def parse_line(text: str) -> Case:
    """One line as a Case; ValueError with a short, value-free reason otherwise."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from exc
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object")
    try:
        return Case.model_validate(value)
    except ValidationError as exc:
        raise ValueError(_problem(exc)) from exc


def _problem(exc: ValidationError) -> str:
    error = exc.errors(include_input=False, include_url=False)[0]
    where = ".".join(str(p) for p in error["loc"]) or "case"
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"unknown field {where!r}"
    if kind == "missing":
        return f"missing field {where!r}"
    if kind == "literal_error" and where == "lang":
        return 'lang must be "ru" or "en"'
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}"


def load_cases(path: Path) -> list[NumberedCase]:
    """Every case of the file, in order; CaseFileError on the first bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseFileError(f"{path}: cannot read the case file ({exc})") from exc
    cases = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            cases.append(NumberedCase(str(path), number, parse_line(line)))
        except ValueError as exc:
            raise CaseFileError(f"{path}:{number}: {exc}") from exc
    if not cases:
        raise CaseFileError(f"{path}: no cases (one JSON object a line)")
    return cases
