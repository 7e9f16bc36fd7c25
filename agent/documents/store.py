"""Recording a turn's attachments with the conversation in the backend (after the user message
they came with is stored, so the rows point at it)."""

from __future__ import annotations

import logging
from typing import Any

from agent import writes
from agent.backend_client import BackendClient, BackendError
from agent.context import Context
from agent.documents.prepare import PreparedAttachments

log = logging.getLogger(__name__)


async def record(
    client: BackendClient,
    context: Context,
    *,
    message_id: int | None,
    prepared: PreparedAttachments,
) -> list[dict[str, Any]]:
    """POST the attachment rows (one transaction in the backend); [] when there are none, when
    the user message was not stored (no rows pointing at nothing), or when the backend refuses
    (logged: the turn itself already has the content)."""
    if not prepared.documents:
        return []
    if message_id is None:
        log.warning("user message not stored; %d attachments not recorded", len(prepared.documents))
        return []
    path = f"/api/assistant/conversations/{context.conversation_id}/attachments"
    body = {"message_id": message_id, "items": prepared.records()}
    try:  # retried while the backend is away (stored once: one batch per message)
        created = await writes.send(client, context, "POST", path, json=body)
    except BackendError as exc:
        log.warning("could not record %d attachments: %s", len(prepared.documents), exc)
        return []
    return list(created["items"])
