"""Sharing an own conversation as a read-only snapshot, revoking it, reading a shared one, and
exporting an own conversation. Sharing and revoking are audited.

Someone else's conversation is NotFound for every owner route; a shared snapshot is readable by
any signed-in user until it is revoked, then NotFound too.
"""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.conversations import service as conversations
from backend.conversations.models import Conversation, Message
from backend.db import utcnow
from backend.errors import NotFound
from backend.identity.models import User
from backend.principal import Principal
from backend.sharing import snapshot
from backend.sharing.models import Share

MAX_ROWS = 5000  # a conversation's rows a snapshot or an export reads
SHARE_PATH = "/shared/"


def url_of(share_id: str) -> str:
    return SHARE_PATH + share_id


async def rows_of(session: AsyncSession, conversation_id: uuid.UUID) -> list[Message]:
    """The conversation's history rows, oldest first."""
    rows = await session.scalars(
        select(Message)
        .where(Message.conversation_id == conversation_id)
        .order_by(Message.id)
        .limit(MAX_ROWS)
    )
    return list(rows)


async def share(*, session: AsyncSession, actor: Principal, conversation_id: uuid.UUID) -> Share:
    """Snapshot an own conversation as it is now; sharing again refreshes the snapshot under
    the same share id."""
    conversation = await conversations.get(
        session=session, actor=actor, conversation_id=conversation_id
    )
    messages = snapshot.messages(await rows_of(session, conversation_id))
    found = await session.scalar(
        select(Share).where(Share.conversation_id == conversation_id).with_for_update()
    )
    now = utcnow()
    if found is None:
        found = Share(
            share_id=secrets.token_urlsafe(16),
            conversation_id=conversation_id,
            created_at=now,
        )
        session.add(found)
    refreshed = found.messages is not None
    found.title, found.messages, found.shared_at = conversation.title, messages, now
    await session.flush()
    audit.record(
        session=session,
        actor=actor,
        action="conversation.share",
        resource_type="conversation",
        resource_id=str(conversation_id),
        details={
            "share_id": found.share_id,
            "messages": len(messages),
            "refreshed": refreshed,
        },
    )
    await session.commit()
    return found


async def revoke(*, session: AsyncSession, actor: Principal, conversation_id: uuid.UUID) -> None:
    """Revoke an own conversation's share: its id is NotFound from now on."""
    await conversations.get(session=session, actor=actor, conversation_id=conversation_id)
    removed = await session.scalar(
        delete(Share).where(Share.conversation_id == conversation_id).returning(Share.share_id)
    )
    audit.record(
        session=session,
        actor=actor,
        action="conversation.unshare",
        resource_type="conversation",
        resource_id=str(conversation_id),
        details={"share_id": removed, "revoked": removed is not None},
    )
    await session.commit()


async def shared(*, session: AsyncSession, share_id: str) -> dict[str, Any]:
    """A shared snapshot, for any signed-in user."""
    row = await session.execute(
        select(Share, User.username)
        .join(Conversation, Conversation.id == Share.conversation_id)
        .join(User, User.id == Conversation.owner_id)
        .where(Share.share_id == share_id)
    )
    found = row.first()
    if found is None:
        raise NotFound("This shared conversation does not exist or is no longer shared")
    share_row, owner = found
    return {
        "title": share_row.title,
        "shared_at": share_row.shared_at,
        "owner": owner,
        "messages": share_row.messages,
    }


async def export_rows(
    *, session: AsyncSession, actor: Principal, conversation_id: uuid.UUID
) -> tuple[Conversation, list[Message]]:
    """An own conversation and its rows, for an export."""
    conversation = await conversations.get(
        session=session, actor=actor, conversation_id=conversation_id
    )
    return conversation, await rows_of(session, conversation_id)
