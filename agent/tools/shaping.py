"""Caps that keep tool observations small enough for a model's context window."""

from __future__ import annotations

from typing import Any

MAX_ITEMS = 25
MAX_ROWS = 50
MAX_CELL_CHARS = 200
MAX_TEXT_CHARS = 8_000


def cap_text(text: str, limit: int = MAX_TEXT_CHARS) -> tuple[str, bool]:
    """`text` cut to `limit` characters, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit], True


def cap_cell(value: Any) -> Any:
    """A long string cell shortened with an ellipsis; other values unchanged."""
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        return value[: MAX_CELL_CHARS - 1] + "…"
    return value


def cap_list(body: Any, key: str, limit: int = MAX_ITEMS) -> Any:
    """`body[key]` cut to `limit` entries, noting how many were left out."""
    if not isinstance(body, dict) or not isinstance(body.get(key), list):
        return body
    items = body[key]
    if len(items) <= limit:
        return body
    return {
        **body,
        key: items[:limit],
        "note": f"showing {limit} of {len(items)} {key}; narrow the request to see others",
    }


def pick(body: Any, *keys: str) -> dict[str, Any]:
    """The named keys of a JSON object that are present, long strings shortened."""
    if not isinstance(body, dict):
        return {}
    return {key: cap_cell(body[key]) for key in keys if key in body}
