"""The admin's usage view: sums per user, per user and day, or per user and model, over a
range of UTC days, paged and written as JSON by Postgres (docs/usage.md has the figures)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import date
from typing import Any, Literal

from sqlalchemy import ColumnElement, Text, func, null, select, text
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession

from backend.identity.models import User
from backend.usage.models import UsageBudget, UsageDaily

GroupBy = Literal["user", "day", "model"]
SortKey = Literal[
    "username", "day", "model", "input_tokens", "output_tokens", "total_tokens", "model_calls"
]
PAGE_LIMIT = 500  # items of one admin page unless the caller asks for fewer or more
MAX_PAGE_LIMIT = 5000


async def admin_usage(
    *,
    session: AsyncSession,
    group_by: GroupBy,
    start: date,
    end: date,
    user_id: uuid.UUID | None = None,
    sort: SortKey | None = None,
    descending: bool = False,
    limit: int = PAGE_LIMIT,
    offset: int = 0,
) -> bytes:
    """One page of the sums per user, per user and day, or per user and model, over [start,
    end] (UTC days), optionally of one user: the JSON of `AdminUsagePage`, built by Postgres.

    Per user and day a range holds a row per user-day (15,000 for 500 users and 30 days).
    Made into Python rows, dicts and models one by one they cost 0.4 s of CPU; written as JSON
    by Postgres where they are summed, 15,000 still cost it ~100 ms. So the view is paged:
    sorted by `sort` (then by the grouping's own keys, so that pages never overlap), `limit`
    items from `offset`, and `has_more` from one row past the page (a count of every item
    would cost another full grouping). docs/usage.md has the figures behind the two shapes."""
    grouping: list[Any] = [UsageDaily.user_id]
    if group_by in ("day", "model"):
        grouping.append(getattr(UsageDaily, group_by))
    sums: dict[str, ColumnElement[Any]] = {
        "input_tokens": func.coalesce(func.sum(UsageDaily.input_tokens), 0),
        "output_tokens": func.coalesce(func.sum(UsageDaily.output_tokens), 0),
        "model_calls": func.coalesce(func.sum(UsageDaily.model_calls), 0),
        "estimated_calls": func.coalesce(func.sum(UsageDaily.estimated_calls), 0),
    }
    sums["total_tokens"] = sums["input_tokens"] + sums["output_tokens"]

    def order(col: Callable[[str], Any]) -> list[Any]:
        """The page's order over `col(name)`: `sort`, the grouping's key, the user's name and
        id (names are unique; the id makes it total, so that pages never overlap)."""
        first = [group_by] if group_by in ("day", "model") else []
        keys = [col(k) for k in (*first, "username", "user_id")]
        if sort is not None:  # the router refuses a column the grouping does not have
            keys.insert(0, col(sort).desc() if descending else col(sort).asc())
        return keys

    in_range: list[ColumnElement[bool]] = [UsageDaily.day.between(start, end)]
    if user_id is not None:
        in_range.append(UsageDaily.user_id == user_id)
    budget = [UsageBudget.daily_tokens] if group_by == "user" else []
    if group_by == "day" and sort is None:
        # Days in order: Postgres walks the day index, groups as it goes and stops one row
        # past the page (8 ms for the first of 15,000 user-days; grouping them all costs 25).
        rows = (
            select(*grouping, User.username, *(v.label(k) for k, v in sums.items()))
            .join(User, User.id == UsageDaily.user_id)
            .where(*in_range)
            .group_by(*grouping, User.username)
        )
        named = {**sums, "username": User.username, "user_id": UsageDaily.user_id}
        named["day"] = UsageDaily.day
        rows = rows.order_by(*order(named.__getitem__))
    else:
        # Any other order needs every group first: summed by ids alone (a small hash), then
        # named and sorted (in a sorted walk Postgres would sort all 15,000 joined rows).
        grouped = (
            select(*grouping, *(v.label(k) for k, v in sums.items()))
            .where(*in_range)
            .group_by(*grouping)
            .cte("grouped")
            .prefix_with("MATERIALIZED")
        )
        g = grouped.c
        rows = (
            select(grouped, User.username, *budget)
            .join(User, User.id == g.user_id)
            .outerjoin(UsageBudget, UsageBudget.user_id == g.user_id)
        )
        named = {**g, "username": User.username}
        rows = rows.order_by(*order(named.__getitem__))
    rows = rows.limit(limit + 1).offset(offset)  # one more: is there a next page
    page = rows.subquery("page")
    numbered = select(page, func.row_number().over(order_by=order(page.c.__getitem__)).label("n"))
    c = numbered.subquery("numbered").c
    item = func.json_build_object(
        "user_id", c.user_id,
        "username", c.username,
        "day", c.day if group_by == "day" else null(),
        "model", c.model if group_by == "model" else null(),
        "daily_tokens", c.daily_tokens if group_by == "user" else null(),
        "input_tokens", c.input_tokens,
        "output_tokens", c.output_tokens,
        "total_tokens", c.total_tokens,
        "model_calls", c.model_calls,
        "estimated_calls", c.estimated_calls,
    )  # fmt: skip
    items = func.json_agg(aggregate_order_by(item, c.n)).filter(c.n <= limit)
    body = func.json_build_object(
        "items",
        func.coalesce(items, text("'[]'::json")),
        "has_more",
        func.count() > limit,
        "offset",
        offset,
        "limit",
        limit,
    )
    # A prepared statement run a few times gets a generic plan, blind to the page's bounds and
    # the range (281 ms instead of 22 by user at 1M calls): plan this one for its values.
    await session.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
    return str(await session.scalar(select(body.cast(Text)))).encode()
