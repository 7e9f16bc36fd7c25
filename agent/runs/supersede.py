"""Superseding what a new message replaces, done by the skeleton before a kind prepares: the
thread's pending confirmation is rejected (recorded in the history; the messages that close its
open calls are returned for the question) and a workflow step waiting for a confirmation is
cancelled (deferred, or at once for a kind that might pause a workflow itself). A decision
(confirm/reject) supersedes nothing."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from agent import hitl
from agent.backend_client import BackendError
from agent.errors import Unavailable
from agent.runs.state import Run

log = logging.getLogger(__name__)
SUPERSEDED = "superseded by a new message"
NOT_RECORDED = "The platform could not record the workflow; try again."


@dataclass(frozen=True)
class Superseded:
    """The thread as the new message found it, and the messages closing its open calls."""

    snapshot: Any
    closing: tuple[BaseMessage, ...]


async def supersede(run: Run, *, at_once: bool) -> Superseded:
    """Reject the thread's pending confirmation and cancel a waiting workflow step; `at_once`:
    the cancel is awaited now (Unavailable when the platform refuses it), else deferred."""
    if at_once:  # not later: the new run might pause a workflow too
        try:
            cancelled = await cancel_waiting_workflows(run)
        except BackendError as exc:
            raise Unavailable(NOT_RECORDED) from exc
        for pending in cancelled:
            run.history.append_later(**hitl.decision_record(pending, "reject", reason=SUPERSEDED))
    snapshot = await run.agent.aget_state(run.config)
    waiting = hitl.pending_of(snapshot)
    for pending in waiting:
        run.history.append_later(**hitl.decision_record(pending, "reject", reason=SUPERSEDED))
    closing = hitl.closing_messages(snapshot, reason="rejected" if waiting else "cancelled")
    if not at_once:
        run.history.later(_supersede_workflows(run))
    return Superseded(snapshot=snapshot, closing=tuple(closing))


async def cancel_waiting_workflows(run: Run) -> list[hitl.Pending]:
    """Cancel the conversation's workflow step waiting for a confirmation; the calls it waited
    on. No request when the lease answer said no execution waits. BackendError when refused."""
    if not run.lease.thread_has("workflow_waiting"):
        return []
    path = f"/api/workflow/conversations/{run.context.conversation_id}/executions"
    body = await run.client.call(run.context, "POST", path + "/cancel-waiting")
    found = (hitl.Pending.from_record(e.get("pending") or {}) for e in body.get("items", []))
    return [pending for pending in found if pending is not None]


async def _supersede_workflows(run: Run) -> None:
    """Cancel a waiting workflow step (a deferred write: the run goes on if it fails) and
    record each call it waited on as rejected in the history."""
    try:
        cancelled = await cancel_waiting_workflows(run)
    except BackendError as exc:
        log.warning("could not cancel waiting workflows: %s", exc)
        return
    for pending in cancelled:
        await run.history.append(**hitl.decision_record(pending, "reject", reason=SUPERSEDED))
