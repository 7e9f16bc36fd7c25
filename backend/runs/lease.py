"""The run lease: one agent run holds a conversation at a time (take, renew, take over a
dead holder's, release), and what a run that takes it learns in the same statement."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Executable,
    Row,
    bindparam,
    case,
    delete,
    exists,
    select,
)
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.codes import Code
from backend.conversations.models import AgentRun, Conversation, Message
from backend.conversations.service import get, locked
from backend.db import utcnow
from backend.errors import Conflict, NotFound
from backend.principal import Principal
from backend.workflows.models import WorkflowExecution


async def acquire_lease(
    *,
    session: AsyncSession,
    actor: Principal,
    conversation_id: uuid.UUID,
    holder: str,
    ttl_s: float,
    run_id: str | None = None,
    owner_url: str | None = None,
    take_over: str | None = None,
    upsert: Executable,
    params: Mapping[str, Any],
) -> tuple[AgentRun, Row[Any]]:
    """Take or renew the run lease atomically; another live holder means CONVERSATION_BUSY,
    an archived conversation CONVERSATION_ARCHIVED (no run starts on one, nor goes on).

    `upsert`: a `lease_upsert` whose answer columns are read in the same statement (no second
    one), their bound values in `params`; the row it returns comes back with the run.
    `take_over`: a live holder the agent found dead, whose lease is taken before it expires."""
    conversation = await locked(session=session, actor=actor, conversation_id=conversation_id)
    if conversation.is_archived:
        await session.rollback()
        raise Conflict(
            "This conversation is archived; restore it first", code=Code.CONVERSATION_ARCHIVED
        )
    now = utcnow()
    values = {
        "conversation_id": conversation_id,
        "holder": holder,
        "now": now,
        "expires_at": now + timedelta(seconds=ttl_s),
        "run_id": run_id,
        "owner_url": owner_url,
        "take_over": take_over,
    }
    row = (await session.execute(upsert, {**params, **values})).one_or_none()
    if row is None:
        await session.rollback()
        raise Conflict("Another run holds this conversation", code=Code.CONVERSATION_BUSY)
    run, facts = row[0], row
    if run.acquired_at != now:  # a heartbeat renewal: not worth an audit row every few seconds
        await session.commit()
        return run, facts
    audit.record(
        session=session,
        actor=actor,
        action="conversation.lease_acquire",
        resource_type="conversation",
        resource_id=str(conversation_id),
        details={"holder": holder, "ttl_s": ttl_s}
        | ({"took_over": take_over} if take_over else {}),
    )
    await session.commit()
    return run, facts


def lease_upsert(answer: Sequence[ColumnElement[Any]]) -> Executable:
    """The lease's upsert with `answer`'s columns in its RETURNING, bound per request by
    `acquire_lease`. Build it once (a module constant): constructing the statement was half
    of a renewal's CPU in the backend (one every few seconds for every live run)."""
    holder: BindParameter[str] = bindparam("holder")
    now: BindParameter[datetime] = bindparam("now")
    return (
        insert(AgentRun)
        .values(
            conversation_id=bindparam("conversation_id"),
            holder=holder,
            acquired_at=now,
            expires_at=bindparam("expires_at"),
            run_id=bindparam("run_id"),
            owner_url=bindparam("owner_url"),
        )
        .on_conflict_do_update(
            index_elements=[AgentRun.conversation_id],
            set_={
                "holder": holder,
                "expires_at": bindparam("expires_at"),
                "run_id": bindparam("run_id"),
                "owner_url": bindparam("owner_url"),
                # A renewal by the same holder keeps its start; a takeover starts anew.
                "acquired_at": case((AgentRun.holder == holder, AgentRun.acquired_at), else_=now),
            },
            # expired, renewed by its holder, or taken from a holder found dead (NULL: never)
            where=(AgentRun.expires_at < now)
            | (AgentRun.holder == holder)
            | (AgentRun.holder == bindparam("take_over")),
        )
        .returning(AgentRun, *answer)  # the answer's columns in the same statement
    )


def _thread_columns() -> tuple[ColumnElement[Any], ...]:
    """What a run that just took the lease needs to know of its conversation, as labelled
    EXISTS columns for the lease answer's one statement: whether it has history rows (a thread
    with no checkpoint recalls them) and a workflow execution waiting for a confirmation (a new
    message supersedes it). Only a lease holder adds either, so they hold for the whole run.
    Bound by `thread_params`."""
    conversation_id: BindParameter[uuid.UUID] = bindparam("thread_conversation_id")
    history = exists().where(Message.conversation_id == conversation_id)
    waiting = exists().where(
        WorkflowExecution.conversation_id == conversation_id,
        WorkflowExecution.status == "waiting",
    )
    return (history.label("has_history"), waiting.label("workflow_waiting"))


THREAD_COLUMNS = _thread_columns()


def thread_params(conversation_id: uuid.UUID) -> dict[str, Any]:
    return {"thread_conversation_id": conversation_id}


async def release_lease(
    *, session: AsyncSession, actor: Principal, conversation_id: uuid.UUID, holder: str
) -> bool:
    """Let go of the lease if `holder` still holds it; whether it did."""
    await get(session=session, actor=actor, conversation_id=conversation_id)
    result = await session.execute(
        delete(AgentRun).where(
            AgentRun.conversation_id == conversation_id, AgentRun.holder == holder
        )
    )
    released = bool(getattr(result, "rowcount", 0))
    audit.record(
        session=session,
        actor=actor,
        action="conversation.lease_release",
        resource_type="conversation",
        resource_id=str(conversation_id),
        details={"holder": holder, "released": released},
    )
    await session.commit()
    return released


# Built once: constructing an ORM select is most of this lookup's CPU otherwise.
_LIVE_RUN = (
    select(Conversation.owner_id, AgentRun)
    .outerjoin(AgentRun, AgentRun.conversation_id == Conversation.id)
    .where(Conversation.id == bindparam("conversation_id"))
)


async def live_run(
    *, session: AsyncSession, actor: Principal, conversation_id: uuid.UUID
) -> AgentRun | None:
    """The conversation's lease row, expired or not (owner only: someone else's is 404); the
    owner check and the row in one statement (every attach and every opened conversation asks)."""
    found = (await session.execute(_LIVE_RUN, {"conversation_id": conversation_id})).one_or_none()
    if found is None or found.owner_id != actor.user_id:
        raise NotFound("Conversation not found")
    run: AgentRun | None = found[1]
    return run
