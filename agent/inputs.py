"""What a submit carries, checked at the boundary: the message, the conversation id, the
action, the optional focus and the optional options. Bad input becomes an `InputError` with a
stream error code.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.errors import Code, InvalidInput

TRUNCATED_SUFFIX = "[...truncated]"
WATCH_ACTIONS = ("attach", "stop")  # a live run: watch it, or stop it (agent/runs/viewers.py)
ACTIONS = ("", "confirm", "reject", *WATCH_ACTIONS)
MAX_FOCUS_CHARS = 2000
MAX_OPTIONS_CHARS = 20_000
MAX_RESOURCES = 20
Mode = Literal["dynamic", "none", "yaml", "diagnose"]
# A sentence ends with . ! ? or … (optionally closed by quotes/brackets) before white space.
SENTENCE_END = re.compile(r"[.!?…][\"')\]»]*\s")


class InputError(InvalidInput):
    def __init__(self, message: str, code: Code = Code.INVALID_INPUT) -> None:
        super().__init__(message, code=code)


class Resources(BaseModel):
    """Files (storage keys) and tables (`datasource.table`) picked for the model's context."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    files: tuple[str, ...] = Field(default=(), max_length=MAX_RESOURCES)
    tables: tuple[str, ...] = Field(default=(), max_length=MAX_RESOURCES)


class Options(BaseModel):
    """The optional fifth input (CONTRACT.md, "Agent endpoint"); an unknown key is refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call_id: str | None = Field(default=None, min_length=1, max_length=200)
    mode: Mode | None = None
    workflow: str | None = Field(default=None, min_length=1, max_length=100)
    resources: Resources = Field(default_factory=Resources)
    args: dict[str, Any] | None = None
    """With `confirm`: the arguments the person edited on the card (agent/hitl.py checks them)."""


@dataclass(frozen=True)
class Submit:
    text: str
    files: list[Any]
    conversation_id: str
    action: str
    focus: dict[str, Any] | None
    truncated: bool = False
    options: Options = field(default_factory=Options)
    mode: Mode = "dynamic"


def truncate(text: str, limit: int) -> tuple[str, bool]:
    """Cut `text` to at most `limit` characters, at a sentence end when there is one in the
    last fifth, marked with `[...truncated]` (FR-028)."""
    if len(text) <= limit:
        return text, False
    room = max(limit - len(TRUNCATED_SUFFIX) - 1, 0)
    head = text[:room]
    ends = [m.end() for m in SENTENCE_END.finditer(head, max(0, room - room // 5))]
    cut = ends[-1] if ends else room
    return head[:cut].rstrip() + " " + TRUNCATED_SUFFIX, True


def _message_parts(message: Any) -> tuple[str, list[Any]]:
    if isinstance(message, str):
        return message, []
    if isinstance(message, dict):
        text = message.get("text") or ""
        files = message.get("files") or []
        if not isinstance(text, str) or not isinstance(files, list):
            raise InputError("message must be {text: string, files: list}")
        return text, files
    if message is None:
        return "", []
    raise InputError("message must be {text: string, files: list}")


def _focus(raw: Any) -> dict[str, Any] | None:
    if raw in (None, ""):
        return None
    if not isinstance(raw, str) or len(raw) > MAX_FOCUS_CHARS:
        raise InputError("focus must be a JSON object of at most 2000 characters")
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise InputError("focus must be a JSON object") from exc
    if not isinstance(value, dict):
        raise InputError("focus must be a JSON object")
    return value


def _options(raw: Any) -> Options:
    if raw in (None, ""):
        return Options()
    if not isinstance(raw, str) or len(raw) > MAX_OPTIONS_CHARS:
        raise InputError(f"options must be a JSON object of at most {MAX_OPTIONS_CHARS} characters")
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise InputError("options must be a JSON object") from exc
    if not isinstance(value, dict):
        raise InputError("options must be a JSON object")
    try:
        return Options.model_validate(value)
    except ValidationError as exc:
        raise InputError(f"options: {_problems(exc)}") from exc


def _problems(exc: ValidationError) -> str:
    """The first few problems as `field: message`, without echoing the values sent."""
    parts = []
    for error in exc.errors(include_input=False)[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "options"
        what = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
        parts.append(f"{where}: {what}")
    return "; ".join(parts)


def parse(
    message: Any,
    conversation_id: Any,
    action: Any,
    focus: Any,
    options: Any = "",
    *,
    max_chars: int,
    default_mode: Mode = "dynamic",
) -> Submit:
    """Check one submit's inputs; raise InputError with a clear message."""
    text, files = _message_parts(message)
    try:
        conversation = str(uuid.UUID(str(conversation_id or "").strip()))
    except ValueError as exc:
        raise InputError("conversation_id must be a conversation's UUID") from exc
    action = (action or "").strip() if isinstance(action, str | type(None)) else action
    if action not in ACTIONS:
        raise InputError("action must be '', 'confirm', 'reject', 'attach' or 'stop'")
    if action in WATCH_ACTIONS:  # the message is ignored: nothing of it is read or stored
        text, files = "", []
    elif not action and not text.strip() and not files:
        raise InputError("The message is empty")
    parsed = _options(options)
    if parsed.args is not None and action != "confirm":
        raise InputError("options.args goes only with action 'confirm'")
    text, truncated = truncate(text, max_chars)
    return Submit(
        text=text,
        files=files,
        conversation_id=conversation,
        action=action,
        focus=_focus(focus),
        truncated=truncated,
        options=parsed,
        mode=parsed.mode or default_mode,
    )
