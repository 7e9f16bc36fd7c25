"""Recording and listing a conversation's attachments; ownership decided by the conversation."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.attachments.models import Attachment
from backend.attachments.schemas import AttachmentBatch
from backend.audit import service as audit
from backend.codes import Code
from backend.config import Settings
from backend.conversations import service as conversations
from backend.conversations.models import Message
from backend.errors import Conflict, NotFound, PayloadTooLarge, Unprocessable
from backend.principal import Principal


def _check_limits(settings: Settings, data: AttachmentBatch) -> None:
    if len(data.items) > settings.agent.max_files:
        raise Unprocessable(
            f"At most {settings.agent.max_files} files per message",
            details={"max_files": settings.agent.max_files},
        )
    for item in data.items:
        if item.size > settings.agent.max_file_bytes:
            raise PayloadTooLarge(
                f"{item.name} is larger than {settings.agent.max_file_bytes} bytes",
                code=Code.FILE_TOO_LARGE,
                details={"name": item.name, "limit": settings.agent.max_file_bytes},
            )


async def create_many(
    *,
    session: AsyncSession,
    actor: Principal,
    settings: Settings,
    conversation_id: uuid.UUID,
    data: AttachmentBatch,
) -> list[Attachment]:
    """Record one message's attachments and their audit rows in one transaction; again for
    the same message, the rows it already has (the agent resends a write whose answer it lost)."""
    conversation = await conversations.get(
        session=session, actor=actor, conversation_id=conversation_id
    )
    if conversation.is_archived:
        raise Conflict("Conversation is archived", code=Code.CONVERSATION_ARCHIVED)
    _check_limits(settings, data)
    if data.message_id is not None:
        message = await session.get(Message, data.message_id)
        if message is None or message.conversation_id != conversation_id:
            raise NotFound("Message not found")
        # One batch per message: sent again (its answer was lost in a fault), it is stored once.
        recorded = await session.scalars(
            select(Attachment)
            .where(Attachment.message_id == data.message_id)
            .order_by(Attachment.created_at, Attachment.id)
        )
        if existing := list(recorded):
            return existing
    rows = [
        Attachment(conversation_id=conversation_id, message_id=data.message_id, **item.model_dump())
        for item in data.items
    ]
    session.add_all(rows)
    await session.flush()
    for row in rows:
        audit.record(
            session=session,
            actor=actor,
            action="attachment.create",
            resource_type="attachment",
            resource_id=str(row.id),
            details={
                "conversation_id": str(conversation_id),
                "message_id": row.message_id,
                "name": row.name,
                "content_type": row.content_type,
                "size": row.size,
                "sha256": row.sha256,
            },
        )
    await session.commit()
    return rows


async def list_(
    *,
    session: AsyncSession,
    actor: Principal,
    conversation_id: uuid.UUID,
    limit: int,
    offset: int,
) -> tuple[list[Attachment], int]:
    """The conversation's attachments, oldest first."""
    await conversations.get(session=session, actor=actor, conversation_id=conversation_id)
    where = Attachment.conversation_id == conversation_id
    total = await session.scalar(select(func.count()).select_from(Attachment).where(where))
    rows = await session.scalars(
        select(Attachment)
        .where(where)
        .order_by(Attachment.created_at, Attachment.id)
        .limit(limit)
        .offset(offset)
    )
    return list(rows), int(total or 0)


async def get(
    *,
    session: AsyncSession,
    actor: Principal,
    conversation_id: uuid.UUID,
    attachment_id: uuid.UUID,
) -> Attachment:
    await conversations.get(session=session, actor=actor, conversation_id=conversation_id)
    row = await session.get(Attachment, attachment_id)
    if row is None or row.conversation_id != conversation_id:
        raise NotFound("Attachment not found")
    return row
