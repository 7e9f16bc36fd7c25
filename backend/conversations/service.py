"""Conversation logic: ownership, history, archive (with checkpoint cleanup)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.codes import Code
from backend.conversations.checkpoints import Checkpoints
from backend.conversations.models import AgentRun, Conversation, Message
from backend.conversations.schemas import MessageCreate
from backend.db import utcnow
from backend.errors import Conflict, NotFound
from backend.principal import Principal
from common import stream

AUTO_TITLE_CHARS = 60


def auto_title(text_: str) -> str:
    """The first user message, whitespace collapsed, cut to 60 characters."""
    return " ".join(text_.split())[:AUTO_TITLE_CHARS]


async def get(
    *, session: AsyncSession, actor: Principal, conversation_id: uuid.UUID
) -> Conversation:
    """The actor's conversation; anyone else's is NotFound, never Forbidden."""
    conversation = await session.get(Conversation, conversation_id)
    if conversation is None or conversation.owner_id != actor.user_id:
        raise NotFound("Conversation not found")
    return conversation


async def locked(
    *, session: AsyncSession, actor: Principal, conversation_id: uuid.UUID
) -> Conversation:
    """The actor's conversation, its row locked until the transaction ends: archive
    and lease acquisition take this lock, so they cannot both succeed on the same state."""
    # FOR NO KEY UPDATE: it excludes the other holder of this lock, not inserts that merely
    # reference the row (messages, attachments).
    conversation = await session.get(
        Conversation, conversation_id, with_for_update={"key_share": True}
    )
    if conversation is None or conversation.owner_id != actor.user_id:
        raise NotFound("Conversation not found")
    return conversation


async def create(*, session: AsyncSession, actor: Principal, title: str | None) -> Conversation:
    conversation = Conversation(owner_id=actor.user_id, title=(title or "").strip())
    session.add(conversation)
    await session.flush()
    audit.record(
        session=session,
        actor=actor,
        action="conversation.create",
        resource_type="conversation",
        resource_id=str(conversation.id),
    )
    await session.commit()
    return conversation


async def list_(
    *, session: AsyncSession, actor: Principal, archived: bool, limit: int, offset: int
) -> tuple[list[Conversation], int]:
    """One page, newest activity first, and the total; one query unless the page is empty."""
    where = (Conversation.owner_id == actor.user_id, Conversation.is_archived.is_(archived))
    result = await session.execute(
        select(Conversation, func.count().over().label("total"))
        .where(*where)
        .order_by(Conversation.updated_at.desc(), Conversation.id.desc())
        .limit(limit)
        .offset(offset)
    )
    rows = result.all()
    if rows:
        return [row[0] for row in rows], int(rows[0].total)
    total = await session.scalar(select(func.count()).select_from(Conversation).where(*where))
    return [], int(total or 0)


async def history(
    *,
    session: AsyncSession,
    actor: Principal,
    conversation_id: uuid.UUID,
    limit: int,
    before: int | None,
) -> tuple[list[Message], bool]:
    """Up to `limit` messages older than `before`, oldest first, and whether more exist."""
    await get(session=session, actor=actor, conversation_id=conversation_id)
    query = select(Message).where(Message.conversation_id == conversation_id)
    if before is not None:
        query = query.where(Message.id < before)
    rows = list(await session.scalars(query.order_by(Message.id.desc()).limit(limit + 1)))
    has_more = len(rows) > limit
    return list(reversed(rows[:limit])), has_more


async def update_title(
    *, session: AsyncSession, actor: Principal, conversation_id: uuid.UUID, title: str
) -> Conversation:
    conversation = await get(session=session, actor=actor, conversation_id=conversation_id)
    conversation.title = title.strip()
    audit.record(
        session=session,
        actor=actor,
        action="conversation.update",
        resource_type="conversation",
        resource_id=str(conversation_id),
        details={"title": title},
    )
    await session.commit()
    return conversation


async def run_holds(session: AsyncSession, conversation_id: uuid.UUID) -> bool:
    live = await session.scalar(
        select(func.count())
        .select_from(AgentRun)
        .where(AgentRun.conversation_id == conversation_id, AgentRun.expires_at > utcnow())
    )
    return bool(live)


async def archive(
    *,
    session: AsyncSession,
    actor: Principal,
    conversation_id: uuid.UUID,
    checkpoints: Checkpoints,
) -> None:
    """Archive and delete the thread's checkpoints (FR-011, FR-029), unless a run holds the
    conversation's lease: then CONVERSATION_BUSY, and nothing changes (a run would go on writing
    checkpoints after the delete). The row lock keeps a run from starting meanwhile."""
    conversation = await locked(session=session, actor=actor, conversation_id=conversation_id)
    if await run_holds(session, conversation_id):
        await session.rollback()
        audit.record(
            session=session,
            actor=actor,
            action="conversation.archive",
            resource_type="conversation",
            resource_id=str(conversation_id),
            outcome="failure",
            details={"reason": Code.CONVERSATION_BUSY},
        )
        await session.commit()
        raise Conflict(
            "A reply is still being written in this conversation; archive it when it ends",
            code=Code.CONVERSATION_BUSY,
        )
    conversation.is_archived = True
    # Deleted while the lock is held, before the commit: if the commit fails the conversation
    # stays active with an empty thread, never archived with a thread left behind.
    had_checkpoints = await checkpoints.delete_thread(str(conversation_id))
    audit.record(
        session=session,
        actor=actor,
        action="conversation.archive",
        resource_type="conversation",
        resource_id=str(conversation_id),
        details={"thread_deleted": True, "had_checkpoints": had_checkpoints},
    )
    await session.commit()


async def restore(
    *, session: AsyncSession, actor: Principal, conversation_id: uuid.UUID
) -> Conversation:
    conversation = await get(session=session, actor=actor, conversation_id=conversation_id)
    conversation.is_archived = False
    audit.record(
        session=session,
        actor=actor,
        action="conversation.restore",
        resource_type="conversation",
        resource_id=str(conversation_id),
    )
    await session.commit()
    return conversation


async def append_message(
    *,
    session: AsyncSession,
    actor: Principal,
    conversation_id: uuid.UUID,
    data: MessageCreate,
    idempotency_key: str | None = None,
) -> Message:
    """Append one message; the first user message names an untitled conversation.

    A message sent again with the `idempotency_key` of one already stored (its answer was
    lost) is that message: stored and audited once.
    """
    conversation = await get(session=session, actor=actor, conversation_id=conversation_id)
    if idempotency_key is not None:
        stored = await _message_by_key(session, conversation_id, idempotency_key)
        if stored is not None:
            return stored
    if conversation.is_archived:
        raise Conflict("Conversation is archived", code=Code.CONVERSATION_ARCHIVED)
    message = Message(
        conversation_id=conversation_id,
        role=data.role,
        content=data.content,
        meta=data.metadata,
        idempotency_key=idempotency_key,
    )
    session.add(message)
    if data.role == "user" and not conversation.title:
        conversation.title = auto_title(data.content)
    conversation.message_count += 1
    conversation.updated_at = utcnow()
    try:
        await session.flush()
        audit.record(
            session=session,
            actor=actor,
            action="conversation.message_append",
            resource_type="conversation",
            resource_id=str(conversation_id),
            details={
                "message_id": message.id,
                "role": data.role,
                **_decision(data.role, data.metadata),
            },
        )
        await session.commit()
    except IntegrityError:
        # the same write, sent again while the first was still being stored: that one wins
        await session.rollback()
        if idempotency_key is None:
            raise
        stored = await _message_by_key(session, conversation_id, idempotency_key)
        if stored is None:
            raise
        return stored
    return message


# A person's decision on a confirmation (common/stream.py `Decision`), as its audit row keeps
# it: the tool, the call, the arguments that ran and, for an edited call, the model's own.
def _decision(role: str, metadata: dict[str, Any] | None) -> dict[str, Any]:
    decision = stream.decision_of(role, metadata)
    if decision is None:
        return {}
    fields: Mapping[str, object] = decision
    return {"decision": {k: fields[k] for k in stream.DECISION_FIELDS if k in fields}}


async def _message_by_key(
    session: AsyncSession, conversation_id: uuid.UUID, key: str
) -> Message | None:
    found = await session.execute(
        select(Message).where(
            Message.conversation_id == conversation_id, Message.idempotency_key == key
        )
    )
    return found.scalar_one_or_none()
