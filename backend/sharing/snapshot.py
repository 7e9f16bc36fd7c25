"""What a shared conversation shows: its history rows, each reduced to what the chat draws.

Kept by allowlist, so a field added to history metadata later is not shared until it is named
here. Left out: the keys of debug records and workflow executions (`message_id`,
`execution_id`: the owner's own records), file contents (what `read_file` returned; attachments
and selected resources keep their name and size only) and anything not listed.
"""

from __future__ import annotations

from typing import Any

from backend.conversations.models import Message

FILE_CONTENT_TOOLS = frozenset({"read_file"})
OMITTED = {"omitted": "File contents are not shared."}
# Per message kind: the metadata a shared page may show.
USER_KEYS = ("type", "decision", "tool", "call_id", "args", "model_args", "edited", "reason")
USER_FLAGS = ("mode", "truncated")
PART_DROPPED = frozenset({"message_id", "execution_id"})
ATTACHMENT_KEYS = ("name", "content_type", "size")
RESOURCE_KEYS = ("ref", "status")


def _attachments(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else []
    return [{k: a[k] for k in ATTACHMENT_KEYS if k in a} for a in items if isinstance(a, dict)]


def _resources(value: Any) -> dict[str, list[dict[str, Any]]]:
    found = value if isinstance(value, dict) else {}
    return {
        kind: [
            {k: r[k] for k in RESOURCE_KEYS if k in r}
            for r in found.get(kind) or []
            if isinstance(r, dict)
        ]
        for kind in ("files", "tables")
    }


def _user(metadata: dict[str, Any]) -> dict[str, Any]:
    kept = {k: metadata[k] for k in (*USER_KEYS, *USER_FLAGS) if k in metadata}
    if "attachments" in metadata:
        kept["attachments"] = _attachments(metadata["attachments"])
    if "resources" in metadata:
        kept["resources"] = _resources(metadata["resources"])
    return kept


def _part(part: Any) -> dict[str, Any] | None:
    if not isinstance(part, dict):
        return None
    metadata = {k: v for k, v in (part.get("metadata") or {}).items() if k not in PART_DROPPED}
    if metadata.get("tool") in FILE_CONTENT_TOOLS and "output" in metadata:
        metadata["output"] = OMITTED
    return {"role": "assistant", "content": str(part.get("content") or ""), "metadata": metadata}


def _assistant(metadata: dict[str, Any]) -> dict[str, Any]:
    parts = [p for p in map(_part, metadata.get("parts") or []) if p is not None]
    return {"parts": parts}


def message(row: Message) -> dict[str, Any]:
    """One history row as a shared page shows it."""
    metadata = row.meta or {}
    if row.role == "assistant":
        shown = _assistant(metadata)
    elif row.role == "user":
        shown = _user(metadata)
    else:
        shown = {}
    return {"role": row.role, "content": row.content, "metadata": shown}


def messages(rows: list[Message]) -> list[dict[str, Any]]:
    """The snapshot's messages: the person's and the assistant's rows, oldest first."""
    return [message(r) for r in rows if r.role in ("user", "assistant")]
