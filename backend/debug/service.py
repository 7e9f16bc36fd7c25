"""Debug records: the agent writes one per assistant row; only the conversation's owner reads.

Someone else's message (or an unknown one) is NotFound, as for conversations.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from backend.codes import Code
from backend.conversations.models import Conversation, Message
from backend.debug.models import DebugRecord
from backend.debug.schemas import DebugRecordWrite
from backend.errors import NotFound, Unprocessable
from backend.principal import Principal


async def _own_message(session: AsyncSession, actor: Principal, message_id: int) -> Message:
    message = await session.scalar(
        select(Message)
        .join(Conversation, Conversation.id == Message.conversation_id)
        .where(Message.id == message_id, Conversation.owner_id == actor.user_id)
    )
    if message is None:
        raise NotFound("Message not found")
    return message


async def get(*, session: AsyncSession, actor: Principal, message_id: int) -> DebugRecord:
    """The record of one of the actor's assistant messages."""
    await _own_message(session, actor, message_id)
    record = await session.scalar(select(DebugRecord).where(DebugRecord.message_id == message_id))
    if record is None:
        raise NotFound("No debug record for this message")
    return record


async def put(
    *, session: AsyncSession, actor: Principal, message_id: int, data: DebugRecordWrite
) -> dict[str, Any]:
    """Create or replace the record of an assistant message of the actor's conversation; its
    receipt (`DebugRecordStored`), not the record."""
    message = await _own_message(session, actor, message_id)
    if message.role != "assistant":
        raise Unprocessable("Only an assistant message has a debug record", code=Code.NOT_ASSISTANT)
    values = data.values()
    statement = (
        insert(DebugRecord)
        .values(message_id=message_id, **values)
        .on_conflict_do_update(index_elements=[DebugRecord.message_id], set_=values)
        .returning(DebugRecord.created_at)
    )
    created_at = await session.scalar(statement)
    await session.commit()
    return {
        "message_id": message_id,
        "calls": len(values["calls"]),
        "dropped_calls": values["dropped_calls"],
        "created_at": created_at,
    }
