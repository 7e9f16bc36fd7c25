"""The conversation's previous diagnosis, read back from its stored history: the latest
assistant row of a diagnosis that returned a draft (its query is kept on the row). Frozen:
only that query and that draft go into the next run, never the rest of the conversation."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from agent.backend_client import BackendClient, BackendError
from agent.context import Context
from agent.diagnosis.draft import DiagnosisDraft
from agent.diagnosis.request import PreviousTurn
from common import stream

log = logging.getLogger(__name__)
LOOK_BACK = 50  # history rows searched, newest first


async def previous_diagnosis(
    client: BackendClient, context: Context, *, max_bytes: int
) -> PreviousTurn | None:
    """The previous diagnosis with a draft, if one is among the latest rows and fits."""
    path = f"/api/assistant/conversations/{context.conversation_id}/history"
    try:
        page = await client.call(context, "GET", path, params={"limit": LOOK_BACK})
    except BackendError as exc:
        log.warning("could not read the previous diagnosis: %s", exc)
        return None
    for row in reversed(page.get("items") or []):
        found = _from_row(row)
        if found is not None:
            return found if found.size() <= max_bytes else None
    return None


def _from_row(row: Any) -> PreviousTurn | None:
    metadata = row.get("metadata") if isinstance(row, dict) else None
    if row.get("role") != "assistant" or not isinstance(metadata, dict):
        return None
    about = metadata.get("diagnosis")
    if not isinstance(about, dict) or not isinstance(about.get("query"), str):
        return None
    for part in stream.parts_of(metadata):
        meta = part["metadata"]
        if stream.kind_of(meta) == stream.DIAGNOSIS and meta.get("draft"):
            try:
                draft = DiagnosisDraft.model_validate(meta["draft"], strict=False)
            except ValidationError:
                return None
            return PreviousTurn(query=about["query"], draft=draft)
    return None
