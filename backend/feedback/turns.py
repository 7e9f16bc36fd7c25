"""What a rated answer answered: the question before it and the tools its turn called.

A turn that paused for a confirmation goes on in a second assistant row after the person's
decision (a `user` row of metadata type `decision`): the question is the last user row that is
not a decision, and the tools are those of every assistant row from there to the rated one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from backend.conversations.models import Message
from common import stream

CYRILLIC = re.compile("[\u0400-\u04ff]")


@dataclass(frozen=True)
class Turn:
    question: str | None
    tools: list[str]


def is_decision(message: Message) -> bool:
    return stream.decision_of(message.role, message.meta) is not None


def tools_of(metadata: dict[str, Any]) -> list[str]:
    """The tools of one assistant row's cards, in order, each once."""
    seen: dict[str, None] = {}
    for part in stream.parts_of(metadata):
        if card := stream.tool_card(part["metadata"]):
            seen.setdefault(card["tool"], None)
    return list(seen)


def turn_of(newest_first: Iterable[Message]) -> Turn:
    """The turn ending at the first message (the rated answer), read backwards."""
    tools: list[str] = []
    for message in newest_first:
        if message.role == "assistant":
            tools = [*tools_of(message.meta or {}), *tools]
        elif message.role == "user" and not is_decision(message):
            return Turn(question=message.content, tools=list(dict.fromkeys(tools)))
    return Turn(question=None, tools=list(dict.fromkeys(tools)))


def lang_of(text: str) -> str:
    """ "ru" when the text has Cyrillic letters, else "en" (the eval case's `lang`)."""
    return "ru" if CYRILLIC.search(text) else "en"


def case_of(turn: Turn, *, max_query_chars: int) -> dict[str, Any] | None:
    """The eval case of a turn (`agent-chat eval --cases`); None when it has no usable question.
    External tools (`server__tool`) are not the eval's and are left out."""
    query = (turn.question or "").strip()
    if not query or len(turn.question or "") > max_query_chars:
        return None
    tools = [t for t in turn.tools if "__" not in t]
    return {"query": turn.question, "expected_tools": tools, "lang": lang_of(query)}


def unique(cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each (query, tools) once, in order."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    kept = []
    for case in cases:
        key = (case["query"], tuple(case["expected_tools"]))
        if key not in seen:
            seen.add(key)
            kept.append(case)
    return kept
