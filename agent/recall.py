"""A thread that has no checkpoint (new, or cleared by checkpoint retention after it was idle)
starts from the conversation's history rows in the backend, so that the model still sees the
earlier turns: the questions and the answers' text (tool calls and their raw results are not
kept in history rows, so they are not replayed)."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agent.backend_client import BackendClient, BackendError
from agent.context import Context

log = logging.getLogger(__name__)

RECALL_LIMIT = 40  # history rows read; the model's input is trimmed to its budget anyway


async def earlier_messages(
    client: BackendClient, context: Context, *, limit: int = RECALL_LIMIT
) -> list[BaseMessage]:
    """The last `limit` history rows as messages, oldest first; none if they cannot be read."""
    path = f"/api/assistant/conversations/{context.conversation_id}/history"
    try:
        body = await client.call(context, "GET", path, params={"limit": limit})
    except BackendError as exc:
        log.warning("could not read the history of %s: %s", context.conversation_id, exc)
        return []
    return [m for m in map(_message, body.get("items", [])) if m is not None]


def _message(row: dict[str, Any]) -> BaseMessage | None:
    """A question or an answer; decisions, notices and empty rows are left out."""
    content, metadata = row.get("content") or "", row.get("metadata") or {}
    if not content or metadata.get("type"):
        return None
    if row.get("role") == "user":
        return HumanMessage(content=content, id=str(uuid.uuid4()))
    if row.get("role") == "assistant":
        return AIMessage(content=content, id=str(uuid.uuid4()))
    return None
