"""Searching one's own conversations by title and message text (Postgres full-text search)."""

from __future__ import annotations

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.conversations.models import SEARCH_CONFIG, Conversation, Message, search_vector
from backend.fulltext import ts_query
from backend.principal import Principal

# A plain-text excerpt around the matches of the newest matching message; the client marks
# the words itself, so no markup travels in the snippet.
HEADLINE = (
    'MaxFragments=2, MaxWords=18, MinWords=6, StartSel="", StopSel="", FragmentDelimiter=" … "'
)


def _snippet(query: ColumnElement[object]) -> ColumnElement[str | None]:
    return (
        select(func.ts_headline(SEARCH_CONFIG, Message.content, query, HEADLINE))
        .where(
            Message.conversation_id == Conversation.id,
            search_vector(Message.content).op("@@")(query),
        )
        .order_by(Message.id.desc())
        .limit(1)
        .correlate(Conversation)
        .scalar_subquery()
    )


async def search(
    *, session: AsyncSession, actor: Principal, q: str, archived: bool, limit: int, offset: int
) -> tuple[list[tuple[Conversation, str | None]], int]:
    """The actor's conversations whose title or any message matches every word of `q`
    (words of 3+ letters as prefixes), newest activity first, each with a snippet of the
    newest matching message (None when only the title matched), and the total."""
    terms = ts_query(q)
    if terms is None:  # nothing searchable (punctuation only): nothing matches
        return [], 0
    query = func.to_tsquery(SEARCH_CONFIG, terms)
    in_messages = (
        select(Message.id)
        .where(
            Message.conversation_id == Conversation.id,
            search_vector(Message.content).op("@@")(query),
        )
        .correlate(Conversation)
        .exists()
    )
    # Ownership first: someone else's conversations never reach the text match.
    where = (
        Conversation.owner_id == actor.user_id,
        Conversation.is_archived.is_(archived),
        or_(search_vector(Conversation.title).op("@@")(query), in_messages),
    )
    result = await session.execute(
        select(Conversation, _snippet(query).label("snippet"), func.count().over().label("total"))
        .where(*where)
        .order_by(Conversation.updated_at.desc(), Conversation.id.desc())
        .limit(limit)
        .offset(offset)
    )
    rows = result.all()
    if rows:
        return [(row[0], row.snippet) for row in rows], int(rows[0].total)
    total = await session.scalar(select(func.count()).select_from(Conversation).where(*where))
    return [], int(total or 0)
