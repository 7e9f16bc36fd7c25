"""Usage routes: a user's own usage, the admin views and budgets, the agent's records."""

from __future__ import annotations

import uuid
from datetime import date, timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response

from backend.deps import Admin, AgentPrincipal, CurrentPrincipal, SessionDep
from backend.errors import Unprocessable, responses
from backend.usage import admin, service
from backend.usage.schemas import (
    AdminUsagePage,
    BudgetUpdate,
    UsageMe,
    UsageWrite,
    UsageWriteRead,
    UserBudgetRead,
)

router = APIRouter(tags=["usage"])
MAX_RANGE_DAYS = 366


@router.get("/api/usage/me", response_model=UsageMe, responses=responses(401, 422))
async def me(
    principal: CurrentPrincipal,
    session: SessionDep,
    days: Annotated[int, Query(ge=1, le=MAX_RANGE_DAYS)] = 30,
) -> UsageMe:
    """The caller's own usage: today, the daily budget, the last `days` days (UTC), and the
    conversations that used the most tokens."""
    return UsageMe.model_validate(await service.me(session=session, actor=principal, days=days))


@router.get("/api/admin/usage", response_model=AdminUsagePage, responses=responses(401, 403, 422))
async def admin_usage(
    principal: Admin,
    session: SessionDep,
    group_by: Annotated[admin.GroupBy, Query()] = "user",
    from_: Annotated[date | None, Query(alias="from", description="First UTC day")] = None,
    to: Annotated[date | None, Query(description="Last UTC day (included)")] = None,
    user_id: Annotated[uuid.UUID | None, Query(description="Only this user's items")] = None,
    sort: Annotated[
        admin.SortKey | None,
        Query(description="Order items by this column (then by the grouping's own keys)"),
    ] = None,
    order: Annotated[Literal["asc", "desc"], Query()] = "asc",
    limit: Annotated[int, Query(ge=1, le=admin.MAX_PAGE_LIMIT)] = admin.PAGE_LIMIT,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> Response:
    """Every user's usage per user, per user and day, or per user and model (admin); the last
    30 days by default. One page: `limit` items from `offset`, `total` items in all; by day or
    model, then user name, unless `sort` names a column."""
    end = to or service.today()
    start = from_ or end - timedelta(days=29)
    if start > end or (end - start).days >= MAX_RANGE_DAYS:
        raise Unprocessable(f"from must be before to, at most {MAX_RANGE_DAYS} days apart")
    if sort in {"day", "model"} and sort != group_by:
        raise Unprocessable(f"sort={sort} needs group_by={sort}")
    page = await admin.admin_usage(
        session=session,
        group_by=group_by,
        start=start,
        end=end,
        user_id=user_id,
        sort=sort,
        descending=order == "desc",
        limit=limit,
        offset=offset,
    )
    return Response(content=page, media_type="application/json")  # AdminUsagePage's JSON


@router.put(
    "/api/admin/users/{user_id}/budget",
    response_model=UserBudgetRead,
    responses=responses(401, 403, 404, 422),
)
async def put_budget(
    user_id: uuid.UUID, body: BudgetUpdate, principal: Admin, session: SessionDep
) -> UserBudgetRead:
    """Set a user's daily token budget, or remove it with `null` (admin; audited)."""
    budget = await service.set_budget(
        session=session, actor=principal, user_id=user_id, daily_tokens=body.daily_tokens
    )
    return UserBudgetRead.model_validate(budget)


@router.post(
    "/api/agent/usage", response_model=UsageWriteRead, responses=responses(401, 403, 404, 422)
)
async def record(
    body: UsageWrite, principal: AgentPrincipal, session: SessionDep
) -> UsageWriteRead:
    """Record model calls (agent service, on behalf of the user who ran them); a call whose key
    is already stored is not counted again, so the agent may retry this request freely."""
    recorded, duplicates = await service.record(session=session, actor=principal, calls=body.calls)
    return UsageWriteRead(recorded=recorded, duplicates=duplicates)
