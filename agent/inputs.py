"""What a submit carries, checked at the boundary: the message, the conversation id, the
action and the optional focus. Bad input becomes an `InputError` with a stream error code.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

TRUNCATED_SUFFIX = "[...truncated]"
ACTIONS = ("", "confirm", "reject")
MAX_FOCUS_CHARS = 2000
# A sentence ends with . ! ? or … (optionally closed by quotes/brackets) before white space.
SENTENCE_END = re.compile(r"[.!?…][\"')\]»]*\s")


class InputError(Exception):
    def __init__(self, message: str, code: str = "INVALID_INPUT") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Submit:
    text: str
    files: list[Any]
    conversation_id: str
    action: str
    focus: dict[str, Any] | None
    truncated: bool = False


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


def parse(message: Any, conversation_id: Any, action: Any, focus: Any, *, max_chars: int) -> Submit:
    """Check one submit's inputs; raise InputError with a clear message."""
    text, files = _message_parts(message)
    try:
        conversation = str(uuid.UUID(str(conversation_id or "").strip()))
    except ValueError as exc:
        raise InputError("conversation_id must be a conversation's UUID") from exc
    action = (action or "").strip() if isinstance(action, str | type(None)) else action
    if action not in ACTIONS:
        raise InputError("action must be '', 'confirm' or 'reject'")
    if not action and not text.strip() and not files:
        raise InputError("The message is empty")
    text, truncated = truncate(text, max_chars)
    return Submit(
        text=text,
        files=files,
        conversation_id=conversation,
        action=action,
        focus=_focus(focus),
        truncated=truncated,
    )
