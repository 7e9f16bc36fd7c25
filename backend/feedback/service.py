"""Ratings of answers: the owner rates an assistant row of their own conversation; admins read
them all, and export the up-rated ones as eval cases. Rating and removing a rating are audited.

Someone else's message (or an unknown one) is NotFound, as for conversations.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import ColumnElement, delete, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.codes import Code
from backend.conversations.models import Conversation, Message
from backend.db import utcnow
from backend.errors import NotFound, Unprocessable
from backend.feedback import turns
from backend.feedback.models import Feedback
from backend.feedback.schemas import FeedbackState, FeedbackWrite, Rating
from backend.identity.models import User
from backend.principal import Principal

TURN_WINDOW = 200  # rows read back from a rated answer to find its question
MAX_QUERY_CHARS = 10_000  # an eval case's query (agent/evaluation/cases.py)
MAX_CASES = 5000


async def _own_answer(session: AsyncSession, actor: Principal, message_id: int) -> Message:
    message = await session.scalar(
        select(Message)
        .join(Conversation, Conversation.id == Message.conversation_id)
        .where(Message.id == message_id, Conversation.owner_id == actor.user_id)
    )
    if message is None:
        raise NotFound("Message not found")
    if message.role != "assistant":
        raise Unprocessable("Only an assistant answer can be rated", code=Code.NOT_ASSISTANT)
    return message


async def put(
    *, session: AsyncSession, actor: Principal, message_id: int, data: FeedbackWrite
) -> Feedback:
    """Rate one of the actor's answers (a new rating replaces the old one)."""
    message = await _own_answer(session, actor, message_id)
    now = utcnow()
    values = {"rating": data.rating, "comment": data.comment, "updated_at": now}
    statement = (
        insert(Feedback)
        .values(message_id=message_id, user_id=actor.user_id, created_at=now, **values)
        .on_conflict_do_update(index_elements=[Feedback.message_id], set_=values)
        .returning(Feedback)
    )
    feedback = (await session.scalars(statement)).one()
    audit.record(
        session=session,
        actor=actor,
        action="feedback.rate",
        resource_type="message",
        resource_id=str(message_id),
        details={
            "conversation_id": str(message.conversation_id),
            "rating": data.rating,
            "comment_chars": len(data.comment or ""),
        },
    )
    await session.commit()
    return feedback


async def delete_(*, session: AsyncSession, actor: Principal, message_id: int) -> None:
    """Remove the actor's rating of one of their answers (nothing to remove is not an error)."""
    message = await _own_answer(session, actor, message_id)
    removed = await session.execute(
        delete(Feedback).where(Feedback.message_id == message_id).returning(Feedback.message_id)
    )
    audit.record(
        session=session,
        actor=actor,
        action="feedback.delete",
        resource_type="message",
        resource_id=str(message_id),
        details={
            "conversation_id": str(message.conversation_id),
            "removed": removed.first() is not None,
        },
    )
    await session.commit()


async def of_messages(*, session: AsyncSession, message_ids: Sequence[int]) -> dict[int, Feedback]:
    """The ratings of these rows (callers checked they may read them)."""
    if not message_ids:
        return {}
    rows = await session.scalars(select(Feedback).where(Feedback.message_id.in_(message_ids)))
    return {f.message_id: f for f in rows}


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _conditions(
    rating: Rating | None, start: date | None, end: date | None
) -> list[ColumnElement[bool]]:
    """The admin list's filters: the rating, and the UTC days the rating was given on."""
    found: list[ColumnElement[bool]] = []
    if rating is not None:
        found.append(Feedback.rating == rating)
    if start is not None:
        found.append(Feedback.created_at >= _day_start(start))
    if end is not None:
        found.append(Feedback.created_at < _day_start(end + timedelta(days=1)))
    return found


async def _turn(session: AsyncSession, message: Message) -> turns.Turn:
    rows = await session.scalars(
        select(Message)
        .where(Message.conversation_id == message.conversation_id, Message.id <= message.id)
        .order_by(Message.id.desc())
        .limit(TURN_WINDOW)
    )
    return turns.turn_of(rows)


async def admin_list(
    *,
    session: AsyncSession,
    rating: Rating | None,
    start: date | None,
    end: date | None,
    limit: int,
    offset: int,
) -> tuple[list[dict[str, Any]], int]:
    """Every rating (admin), newest first: the answer, its question and tools, who rated it."""
    if start is not None and end is not None and start > end:
        raise Unprocessable("from must not be after to")
    where = _conditions(rating, start, end)
    total = await session.scalar(select(func.count()).select_from(Feedback).where(*where))
    rows = await session.execute(
        select(Feedback, Message, User.username)
        .join(Message, Message.id == Feedback.message_id)
        .join(User, User.id == Feedback.user_id)
        .where(*where)
        .order_by(Feedback.created_at.desc(), Feedback.message_id.desc())
        .limit(limit)
        .offset(offset)
    )
    items = []
    for feedback, message, username in rows.tuples().all():
        turn = await _turn(session, message)
        items.append(
            {
                "message_id": message.id,
                "conversation_id": message.conversation_id,
                "username": username,
                "rating": feedback.rating,
                "comment": feedback.comment,
                "question": turn.question,
                "answer": message.content,
                "tools": turn.tools,
                "created_at": feedback.created_at,
            }
        )
    return items, int(total or 0)


async def cases(*, session: AsyncSession, rating: Rating) -> list[dict[str, Any]]:
    """Eval cases (`agent-chat eval --cases`) of the answers rated `rating`, oldest first."""
    rows = await session.scalars(
        select(Message)
        .join(Feedback, Feedback.message_id == Message.id)
        .where(Feedback.rating == rating)
        .order_by(Feedback.created_at, Feedback.message_id)
        .limit(MAX_CASES)
    )
    found = []
    for message in rows.all():
        case = turns.case_of(await _turn(session, message), max_query_chars=MAX_QUERY_CHARS)
        if case is not None:
            found.append(case)
    return turns.unique(found)


def feedback_state(feedback: Feedback | None) -> FeedbackState | None:
    """A history item's `feedback`."""
    if feedback is None:
        return None
    return FeedbackState.model_validate({"rating": feedback.rating, "comment": feedback.comment})
