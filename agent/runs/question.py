"""The turn's question, built once for every kind that puts one to the thread (dynamic, none,
workflow) and returned, not stored: the messages closing the thread's open calls (from the
superseding, agent/runs/supersede.py), earlier history when the thread has no checkpoint, the
attachments and selected resources with their notices, and the user row queued for the history.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agent import hitl, recall, resources
from agent.backend_client import BackendError
from agent.documents import PreparedAttachments, prepare_attachments, store
from agent.errors import Code
from agent.runs.result import Question
from agent.runs.state import Run
from agent.runs.supersede import Superseded

log = logging.getLogger(__name__)


async def attachments_of(run: Run) -> PreparedAttachments:
    """The submit's files, read and checked (refused before anything is stored)."""
    return await prepare_attachments(run.submit.files, run.settings)


async def opening(run: Run, superseded: Superseded) -> list[BaseMessage]:
    """What goes to the thread before a new question: the messages closing its open calls,
    after the earlier history when the thread has no checkpoint (new, or cleared by retention)
    and the history has any."""
    closing = list(superseded.closing)
    if not hitl.has_checkpoint(superseded.snapshot) and run.lease.thread_has("has_history"):
        closing = [*await recall.earlier_messages(run.client, run.context), *closing]
    return closing


async def new_message(
    run: Run, superseded: Superseded, attachments: PreparedAttachments
) -> Question:
    """A new message as the thread will hold it (the messages closing the thread's open calls,
    then the question with its attachments and resources); its user row is queued."""
    submit, settings, snapshot = run.submit, run.settings, superseded.snapshot
    waiting = hitl.pending_of(snapshot)
    closing = await opening(run, superseded)
    metadata: dict[str, Any] = {}
    if attachments.documents:
        metadata["attachments"] = attachments.metadata()
    if submit.truncated:
        metadata["truncated"] = True
        run.show.notice(
            Code.TRUNCATED,
            f"Your message was longer than {settings.agent.max_message_chars:,} "
            "characters and was cut.",
        )
    for notice in attachments.notices:
        run.show.notice(notice.code, notice.message, notice.details)
    read = await _read_resources(run, attachments)
    if read.record:
        metadata["resources"] = read.record
    if submit.mode != "dynamic":
        metadata["mode"] = submit.mode
    for item in read.notices:
        run.show.notice(item.code, item.message, item.details)
    text = "\n\n".join(p for p in (submit.text, read.content()) if p)
    content = attachments.content(text)
    retried = None if waiting else unanswered_question(snapshot, content)
    # The same question again after a turn that never answered it (its process died, or
    # it failed or was stopped before any text): the thread keeps it once, under its id.
    human = retried or HumanMessage(content=content, id=str(uuid.uuid4()))
    if retried is None or not await _question_saved(run):
        run.history.later(_save_question(run, metadata, attachments))
    return Question(closing=tuple(closing), human=human, resources=read)


async def _save_question(
    run: Run, metadata: dict[str, Any], attachments: PreparedAttachments
) -> None:
    message_id = await run.history.append("user", run.submit.text, metadata)
    await store.record(run.client, run.context, message_id=message_id, prepared=attachments)


async def _question_saved(run: Run) -> bool:
    """Whether the history's last question is this submit's text (saved by the turn that
    did not answer it), so a retry adds no second user row."""
    path = f"/api/assistant/conversations/{run.context.conversation_id}/history"
    try:
        body = await run.client.call(run.context, "GET", path, params={"limit": 10})
    except BackendError as exc:
        log.warning("could not read the history before a retry: %s", exc)
        return False
    questions = [m for m in body.get("items", []) if m.get("role") == "user"]
    return bool(questions) and questions[-1].get("content") == run.submit.text


async def _read_resources(
    run: Run, attachments: PreparedAttachments
) -> resources.PreparedResources:
    """The selected files and tables, read as the user, within their share of the input."""
    used = resources.tokens_of((run.submit.text, *attachments.blocks))
    cap = resources.cap(run.settings, used)
    return await resources.prepare(
        run.client, run.context, run.submit.options.resources, cap_tokens=cap
    )


def unanswered_question(snapshot: Any, content: Any) -> HumanMessage | None:
    """The thread's last question when it equals `content` and nothing answered it: no model
    text came after it, only tool calls and their results (a turn cut short)."""
    for message in reversed((snapshot.values or {}).get("messages", [])):
        if isinstance(message, HumanMessage):
            return message if message.content == content else None
        if isinstance(message, AIMessage) and message.text and not message.tool_calls:
            return None
    return None
