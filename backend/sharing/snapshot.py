"""What a shared conversation shows: its history rows, each reduced to what the chat draws.

Rows are read through the stream protocol's shapes (common/stream.py) and kept by allowlist, so
a field added to history metadata later is not shared until it is named there. Left out: the
keys of debug records and workflow executions (`PART_RECORD_KEYS`: the owner's own records),
file contents (what `read_file` returned; attachments and selected resources keep their name
and size only) and anything not listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from backend.conversations.models import Message
from common import stream, tools

FILE_CONTENT_TOOLS = frozenset({tools.READ_FILE})
OMITTED = {"omitted": "File contents are not shared."}


def _pick(found: Mapping[str, object], keys: Iterable[str]) -> dict[str, Any]:
    return {k: found[k] for k in keys if k in found}


def _question(question: stream.Question) -> dict[str, Any]:
    kept = _pick(question, stream.QUESTION_FLAGS)
    if "attachments" in question:
        kept["attachments"] = [
            _pick(a, stream.ATTACHMENT_SHOWN) for a in stream.attachments_of(question)
        ]
    if "resources" in question:
        kept["resources"] = {
            kind: [_pick(r, stream.RESOURCE_SHOWN) for r in found]
            for kind, found in stream.resources_of(question).items()
        }
    return kept


def _decision(decision: stream.Decision) -> dict[str, Any]:
    return _pick(decision, ("type", *stream.DECISION_FIELDS))


def _part(part: stream.Part) -> stream.Part:
    metadata = {k: v for k, v in part["metadata"].items() if k not in stream.PART_RECORD_KEYS}
    card = stream.tool_card(metadata)
    if card is not None and card["tool"] in FILE_CONTENT_TOOLS and "output" in card:
        metadata["output"] = OMITTED
    return {"role": "assistant", "content": part["content"], "metadata": metadata}


def _user(row: Message) -> dict[str, Any]:
    if decision := stream.decision_of(row.role, row.meta):
        return _decision(decision)
    question = stream.question_of(row.role, row.meta)
    return _question(question) if question is not None else {}


def message(row: Message) -> dict[str, Any]:
    """One history row as a shared page shows it."""
    if row.role == "assistant":
        shown: dict[str, Any] = dict(stream.record(list(map(_part, stream.parts_of(row.meta)))))
    elif row.role == "user":
        shown = _user(row)
    else:
        shown = {}
    return {"role": row.role, "content": row.content, "metadata": shown}


def messages(rows: list[Message]) -> list[dict[str, Any]]:
    """The snapshot's messages: the person's and the assistant's rows, oldest first."""
    return [message(r) for r in rows if r.role in ("user", "assistant")]
