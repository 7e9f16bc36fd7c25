"""The model's input for one diagnosis: the current query (as written, bounded in UTF-8
bytes, never cut), the focus as a fact, and optionally the previous diagnosis, frozen. Never
the conversation."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agent.diagnosis.draft import DiagnosisDraft


class QueryTooLong(Exception):
    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} > {limit} bytes")
        self.size = size
        self.limit = limit


@dataclass(frozen=True)
class PreviousTurn:
    """The conversation's previous diagnosis: what was asked and the draft it returned."""

    query: str
    draft: DiagnosisDraft

    def as_input(self) -> dict[str, Any]:
        return {"query": self.query, "draft": self.draft.model_dump(mode="json")}

    def size(self) -> int:
        return len(json.dumps(self.as_input(), ensure_ascii=False).encode("utf-8"))


def check_query(text: str, *, max_bytes: int) -> None:
    """Refuse a query over `max_bytes` UTF-8 bytes (Cyrillic letters count two)."""
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise QueryTooLong(size, max_bytes)


def model_input(query: str, *, focus: dict[str, Any] | None, previous: PreviousTurn | None) -> str:
    """The one user message of the run: a JSON object with fixed fields."""
    body = {
        "query": query,
        "focus": focus,
        "previous_turn": previous.as_input() if previous else None,
    }
    return json.dumps(body, ensure_ascii=False)
