"""An own conversation exported: a Markdown transcript (tool calls and confirmations as their
own sections) or the JSON of its rows."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from backend.conversations.models import Conversation, Message

MAX_BLOCK_CHARS = 4000  # a tool's input or output in the transcript; the JSON export has all
FENCE = "```"


def _json_block(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    if len(text) > MAX_BLOCK_CHARS:
        text = text[:MAX_BLOCK_CHARS] + "\n... (cut; the JSON export has it all)"
    return f"{FENCE}json\n{text.replace(FENCE, '` ` `')}\n{FENCE}"


def _tool(meta: dict[str, Any]) -> str:
    status = {"tool_start": "not finished", "tool_end": "done", "tool_error": "failed"}
    lines = [
        f"### Tool: {meta.get('title') or meta.get('tool')} (`{meta.get('tool')}`, "
        f"{status.get(str(meta.get('type')), '')})",
        "",
        "Input:",
        "",
        _json_block(meta.get("input") or {}),
    ]
    if meta.get("type") == "tool_end":
        lines += ["", "Output:", "", _json_block(meta.get("output"))]
    if meta.get("type") == "tool_error":
        error = meta.get("error") or {}
        lines += ["", f"Error `{error.get('code')}`: {error.get('message')}"]
    return "\n".join(lines)


def _part(part: dict[str, Any]) -> str:
    meta = part.get("metadata") or {}
    kind = meta.get("type")
    content = str(part.get("content") or "")
    if kind is None:
        return content
    if kind in ("tool_start", "tool_end", "tool_error"):
        return _tool(meta)
    if kind == "confirm_required":
        return "\n".join(
            [
                f"### Confirmation asked: {meta.get('description') or content}",
                "",
                f"Tool `{meta.get('tool')}` with:",
                "",
                _json_block(meta.get("args") or {}),
            ]
        )
    if kind in ("error", "notice"):
        return f"> **{kind.title()} `{meta.get('code')}`**: {meta.get('message') or content}"
    if kind == "workflow_step":
        return f"### Workflow step {meta.get('name')}: {meta.get('status')}"
    if kind == "diagnosis":
        return f"### Diagnosis: {meta.get('outcome')}\n\n{content}".rstrip()
    return content


def _decision(message: Message) -> str:
    meta = message.meta or {}
    lines = [f"### Decision: {message.content}"]
    if meta.get("edited"):
        lines += ["", "The model proposed:", "", _json_block(meta.get("model_args") or {})]
        lines += ["", "What ran:", "", _json_block(meta.get("args") or {})]
    return "\n".join(lines)


def markdown(conversation: Conversation, rows: list[Message], *, exported_at: datetime) -> str:
    """The conversation as a Markdown transcript."""
    out = [
        f"# {conversation.title or 'Conversation'}",
        "",
        f"_Created {conversation.created_at.isoformat()}, exported {exported_at.isoformat()}._",
    ]
    for row in rows:
        meta = row.meta or {}
        if row.role == "user" and meta.get("type") == "decision":
            out += ["", _decision(row)]
        elif row.role == "user":
            out += ["", "## You", "", row.content]
            names = [a.get("name") for a in meta.get("attachments") or [] if isinstance(a, dict)]
            if names:
                out += ["", "Attached: " + ", ".join(f"`{n}`" for n in names)]
        elif row.role == "assistant":
            out += ["", "## Assistant"]
            for part in meta.get("parts") or [{"content": row.content, "metadata": {}}]:
                if isinstance(part, dict) and (text := _part(part)):
                    out += ["", text]
    return "\n".join(out) + "\n"


def as_json(conversation: Conversation, rows: list[Message]) -> dict[str, Any]:
    """The conversation as JSON: `{title, created_at, messages: [...]}`."""
    return {
        "title": conversation.title,
        "created_at": conversation.created_at.isoformat(),
        "messages": [
            {
                "id": r.id,
                "role": r.role,
                "content": r.content,
                "metadata": r.meta or {},
                "created_at": r.created_at.isoformat(),
            }
            for r in rows
        ],
    }
