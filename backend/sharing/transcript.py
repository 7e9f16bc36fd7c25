"""An own conversation exported: a Markdown transcript (tool calls and confirmations as their
own sections) or the JSON of its rows."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from backend.conversations.models import Conversation, Message
from common import stream

MAX_BLOCK_CHARS = 4000  # a tool's input or output in the transcript; the JSON export has all
FENCE = "```"


def _json_block(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    if len(text) > MAX_BLOCK_CHARS:
        text = text[:MAX_BLOCK_CHARS] + "\n... (cut; the JSON export has it all)"
    return f"{FENCE}json\n{text.replace(FENCE, '` ` `')}\n{FENCE}"


STATUS = {stream.TOOL_START: "not finished", stream.TOOL_END: "done", stream.TOOL_ERROR: "failed"}


def _tool(meta: stream.ToolStart | stream.ToolEnd | stream.ToolError) -> str:
    lines = [
        f"### Tool: {meta.get('title') or meta.get('tool')} (`{meta.get('tool')}`, "
        f"{STATUS.get(meta['type'], '')})",
        "",
        "Input:",
        "",
        _json_block(meta.get("input") or {}),
    ]
    if meta["type"] == stream.TOOL_END:
        lines += ["", "Output:", "", _json_block(meta.get("output"))]
    if meta["type"] == stream.TOOL_ERROR:
        error = meta.get("error") or {}
        lines += ["", f"Error `{error.get('code')}`: {error.get('message')}"]
    return "\n".join(lines)


def _confirmation(meta: stream.ConfirmRequired, content: str) -> str:
    return "\n".join(
        [
            f"### Confirmation asked: {meta.get('description') or content}",
            "",
            f"Tool `{meta.get('tool')}` with:",
            "",
            _json_block(meta.get("args") or {}),
        ]
    )


def _part(part: stream.Part) -> str:
    meta, content = stream.shape_of(part["metadata"]), part["content"]
    if meta is None:  # answer text (or a shape this export does not know)
        return content
    if meta["type"] in stream.TOOL_CALLS:
        return _tool(meta)  # type: ignore[arg-type]
    if meta["type"] == stream.CONFIRM_REQUIRED:
        return _confirmation(meta, content)
    if meta["type"] in (stream.ERROR, stream.NOTICE):
        return (
            f"> **{meta['type'].title()} `{meta.get('code')}`**: {meta.get('message') or content}"
        )
    if meta["type"] == stream.WORKFLOW_STEP:
        return f"### Workflow step {meta.get('name')}: {meta.get('status')}"
    return f"### Diagnosis: {meta.get('outcome')}\n\n{content}".rstrip()


def _decision(content: str, decision: stream.Decision) -> str:
    lines = [f"### Decision: {content}"]
    if decision.get("edited"):
        lines += ["", "The model proposed:", "", _json_block(decision.get("model_args") or {})]
        lines += ["", "What ran:", "", _json_block(decision.get("args") or {})]
    return "\n".join(lines)


def _question(content: str, question: stream.Question) -> list[str]:
    out = ["", "## You", "", content]
    names = [a.get("name") for a in stream.attachments_of(question)]
    if names:
        out += ["", "Attached: " + ", ".join(f"`{n}`" for n in names)]
    return out


def _answer(row: Message) -> list[str]:
    out = ["", "## Assistant"]
    text_only: stream.Part = {"role": "assistant", "content": row.content, "metadata": {}}
    for part in stream.parts_of(row.meta) or [text_only]:
        if text := _part(part):
            out += ["", text]
    return out


def markdown(conversation: Conversation, rows: list[Message], *, exported_at: datetime) -> str:
    """The conversation as a Markdown transcript."""
    out = [
        f"# {conversation.title or 'Conversation'}",
        "",
        f"_Created {conversation.created_at.isoformat()}, exported {exported_at.isoformat()}._",
    ]
    for row in rows:
        if decision := stream.decision_of(row.role, row.meta):
            out += ["", _decision(row.content, decision)]
        elif (question := stream.question_of(row.role, row.meta)) is not None:
            out += _question(row.content, question)
        elif row.role == "assistant":
            out += _answer(row)
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
