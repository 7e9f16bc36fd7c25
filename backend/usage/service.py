"""Recording model calls and reading their sums; budgets. Sums come from the rollups only."""

from __future__ import annotations

import uuid
from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import BindParameter, ColumnElement, bindparam, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.conversations.models import Conversation
from backend.errors import NotFound
from backend.identity.models import User
from backend.principal import Principal
from backend.usage.models import UsageBudget, UsageCall, UsageConversation, UsageDaily
from backend.usage.schemas import UsageCallWrite

MAX_CONVERSATIONS = 100  # of a user's page: the ones with the most tokens
ZERO = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0, "model_calls": 0}


def today() -> date:
    return datetime.now(UTC).date()


def resets_at(day: date | None = None) -> datetime:
    """The next midnight UTC after `day` (today by default)."""
    return datetime.combine((day or today()) + timedelta(days=1), time(), tzinfo=UTC)


def _sums(table: Any) -> list[ColumnElement[Any]]:
    return [
        func.coalesce(func.sum(table.input_tokens), 0).label("input_tokens"),
        func.coalesce(func.sum(table.output_tokens), 0).label("output_tokens"),
        func.coalesce(func.sum(table.model_calls), 0).label("model_calls"),
    ]


def tokens(row: Any) -> dict[str, int]:
    """A row of sums as the contract's token fields."""
    inp, out = int(row.input_tokens or 0), int(row.output_tokens or 0)
    calls = int(row.model_calls or 0)
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "total_tokens": inp + out,
        "model_calls": calls,
    }


async def record(
    *, session: AsyncSession, actor: Principal, calls: list[UsageCallWrite]
) -> tuple[int, int]:
    """Store the actor's calls once each (by key) and add the new ones to the rollups, in one
    transaction; (recorded, duplicates). A conversation that is not the actor's is NotFound."""
    conversations = {c.conversation_id for c in calls if c.conversation_id is not None}
    if conversations:
        owned = set(
            await session.scalars(
                select(Conversation.id).where(
                    Conversation.id.in_(conversations), Conversation.owner_id == actor.user_id
                )
            )
        )
        if owned != conversations:
            raise NotFound("Conversation not found")
    day = today()
    rows = [
        {
            "idempotency_key": c.key,
            "user_id": actor.user_id,
            "conversation_id": c.conversation_id,
            "run_id": c.run_id,
            "mode": c.mode,
            "model": c.model,
            "input_tokens": c.input_tokens,
            "output_tokens": c.output_tokens,
            "source": c.source,
            "evaluation": c.evaluation,
            "day": day,
        }
        for c in {c.key: c for c in calls}.values()
    ]
    inserted = (
        await session.execute(
            insert(UsageCall)
            .values(rows)
            .on_conflict_do_nothing(index_elements=[UsageCall.idempotency_key])
            .returning(
                UsageCall.conversation_id,
                UsageCall.model,
                UsageCall.input_tokens,
                UsageCall.output_tokens,
                UsageCall.source,
            )
        )
    ).all()
    await _roll_up(session, actor.user_id, day, inserted)
    await session.commit()
    return len(inserted), len(calls) - len(inserted)


async def _roll_up(session: AsyncSession, user_id: uuid.UUID, day: date, rows: Any) -> None:
    """Add the new calls to the daily and conversation sums (keys sorted: no deadlock between
    two writers of the same user)."""
    by_model: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    by_conversation: dict[uuid.UUID, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        sums = by_model[r.model]
        sums[0] += r.input_tokens
        sums[1] += r.output_tokens
        sums[2] += 1
        sums[3] += r.source == "estimated"
        if r.conversation_id is not None:
            conv = by_conversation[r.conversation_id]
            conv[0] += r.input_tokens
            conv[1] += r.output_tokens
            conv[2] += 1
    for model in sorted(by_model):
        inp, out, n, est = by_model[model]
        stmt = insert(UsageDaily).values(
            user_id=user_id,
            day=day,
            model=model,
            input_tokens=inp,
            output_tokens=out,
            model_calls=n,
            estimated_calls=est,
        )
        await session.execute(
            stmt.on_conflict_do_update(
                index_elements=[UsageDaily.user_id, UsageDaily.day, UsageDaily.model],
                set_={
                    "input_tokens": UsageDaily.input_tokens + inp,
                    "output_tokens": UsageDaily.output_tokens + out,
                    "model_calls": UsageDaily.model_calls + n,
                    "estimated_calls": UsageDaily.estimated_calls + est,
                },
            )
        )
    for conversation_id in sorted(by_conversation):
        inp, out, n = by_conversation[conversation_id]
        stmt = insert(UsageConversation).values(
            conversation_id=conversation_id,
            user_id=user_id,
            input_tokens=inp,
            output_tokens=out,
            model_calls=n,
        )
        await session.execute(
            stmt.on_conflict_do_update(
                index_elements=[UsageConversation.conversation_id],
                set_={
                    "input_tokens": UsageConversation.input_tokens + inp,
                    "output_tokens": UsageConversation.output_tokens + out,
                    "model_calls": UsageConversation.model_calls + n,
                },
            )
        )


async def tokens_today(*, session: AsyncSession, user_id: uuid.UUID) -> int:
    """The user's input + output tokens of today (UTC)."""
    total = await session.scalar(
        select(
            func.coalesce(func.sum(UsageDaily.input_tokens + UsageDaily.output_tokens), 0)
        ).where(UsageDaily.user_id == user_id, UsageDaily.day == today())
    )
    return int(total or 0)


async def budget_of(*, session: AsyncSession, user_id: uuid.UUID) -> int | None:
    return await session.scalar(
        select(UsageBudget.daily_tokens).where(UsageBudget.user_id == user_id)
    )


def _standing_columns() -> tuple[ColumnElement[Any], ...]:
    """The user's tokens today and daily budget as two labelled scalar subqueries, so that a
    caller reads them in the statement it already sends (the lease answer); bound by
    `standing_params`. Built once (STANDING_COLUMNS)."""
    user_id: BindParameter[uuid.UUID] = bindparam("standing_user_id")
    spent = (
        select(func.coalesce(func.sum(UsageDaily.input_tokens + UsageDaily.output_tokens), 0))
        .where(UsageDaily.user_id == user_id, UsageDaily.day == bindparam("standing_day"))
        .scalar_subquery()
    )
    budget = (
        select(UsageBudget.daily_tokens).where(UsageBudget.user_id == user_id).scalar_subquery()
    )
    return (spent.label("tokens_today"), budget.label("daily_tokens"))


STANDING_COLUMNS = _standing_columns()


def standing_params(user_id: uuid.UUID) -> dict[str, Any]:
    return {"standing_user_id": user_id, "standing_day": today()}


def standing_of(row: Any) -> dict[str, Any]:
    """Tokens today, the daily budget and when the day resets, from `STANDING_COLUMNS`."""
    return {
        "tokens_today": int(row.tokens_today or 0),
        "daily_tokens": row.daily_tokens,
        "resets_at": resets_at(),
    }


async def conversation_usage(
    *, session: AsyncSession, conversation_id: uuid.UUID
) -> dict[str, int]:
    row = (
        await session.execute(
            select(*_sums(UsageConversation)).where(
                UsageConversation.conversation_id == conversation_id
            )
        )
    ).one()
    return tokens(row)


async def me(*, session: AsyncSession, actor: Principal, days: int) -> dict[str, Any]:
    """The actor's usage: today, the budget, the last `days` days, the top conversations."""
    end = today()
    start = end - timedelta(days=days - 1)
    per_day = {
        r.day: tokens(r)
        for r in await session.execute(
            select(UsageDaily.day, *_sums(UsageDaily))
            .where(UsageDaily.user_id == actor.user_id, UsageDaily.day.between(start, end))
            .group_by(UsageDaily.day)
        )
    }
    zero = dict(ZERO)
    by_day = [
        {"day": d, **per_day.get(d, zero)} for d in (start + timedelta(days=i) for i in range(days))
    ]
    conversations = await session.execute(
        select(
            UsageConversation.conversation_id,
            Conversation.title,
            UsageConversation.input_tokens,
            UsageConversation.output_tokens,
            UsageConversation.model_calls,
        )
        .join(Conversation, Conversation.id == UsageConversation.conversation_id)
        .where(UsageConversation.user_id == actor.user_id)
        .order_by((UsageConversation.input_tokens + UsageConversation.output_tokens).desc())
        .limit(MAX_CONVERSATIONS)
    )
    return {
        "today": per_day.get(end, zero),
        "budget": {
            "daily_tokens": await budget_of(session=session, user_id=actor.user_id),
            "resets_at": resets_at(end),
        },
        "by_day": by_day,
        "by_conversation": [
            {"conversation_id": r.conversation_id, "title": r.title, **tokens(r)}
            for r in conversations
        ],
    }


async def set_budget(
    *, session: AsyncSession, actor: Principal, user_id: uuid.UUID, daily_tokens: int | None
) -> dict[str, Any]:
    """Set or (None) remove a user's daily budget; audited in the same transaction."""
    user = await session.get(User, user_id)
    if user is None:
        raise NotFound("User not found")
    previous = await budget_of(session=session, user_id=user_id)
    if daily_tokens is None:
        existing = await session.get(UsageBudget, user_id)
        if existing is not None:
            await session.delete(existing)
    else:
        await session.execute(
            insert(UsageBudget)
            .values(user_id=user_id, daily_tokens=daily_tokens)
            .on_conflict_do_update(
                index_elements=[UsageBudget.user_id],
                set_={"daily_tokens": daily_tokens, "updated_at": func.now()},
            )
        )
    audit.record(
        session=session,
        actor=actor,
        action="user.budget",
        resource_type="user",
        resource_id=str(user_id),
        details={"username": user.username, "daily_tokens": daily_tokens, "previous": previous},
    )
    await session.commit()
    return {
        "user_id": user.id,
        "username": user.username,
        "daily_tokens": daily_tokens,
        "tokens_today": await tokens_today(session=session, user_id=user_id),
        "resets_at": resets_at(),
    }
