"""Debug records: the agent writes one per assistant row; only the conversation's owner reads.

Someone else's message (or an unknown one) is NotFound, as for conversations.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

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
) -> DebugRecord:
    """Create or replace the record of an assistant message of the actor's conversation."""
    message = await _own_message(session, actor, message_id)
    if message.role != "assistant":
        raise Unprocessable("Only an assistant message has a debug record", code="NOT_ASSISTANT")
    values = data.model_dump(mode="json")
    statement = (
        insert(DebugRecord)
        .values(message_id=message_id, **values)
        .on_conflict_do_update(index_elements=[DebugRecord.message_id], set_=values)
        .returning(DebugRecord)
    )
    record = await session.scalar(statement, execution_options={"populate_existing": True})
    await session.commit()
    assert record is not None  # RETURNING of an upsert always has the row
    return record
