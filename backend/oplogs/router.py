"""Operational log search (viewer)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

from backend.deps import Page, SessionDep, Viewer
from backend.errors import responses
from backend.oplogs import service
from backend.oplogs.schemas import Level, LogPage, LogRead

router = APIRouter(tags=["oplogs"])

SEARCH_HELP = (
    "Operational log entries (validation failures, deployments, migrations, SQL errors, logins), "
    "newest first, as `{items, total}`.\n\n"
    '- `query`: full-text search in web-search syntax (`"exact phrase"`, `or`, `-excluded`) '
    "over the message, the source and the string values of `details`; words match as written "
    "and by English stem, so `campaign_id`, `timeout` and `timeouts` all work. The text is "
    "never interpreted as SQL.\n"
    "- `level`: the minimum severity, **at least this level** in the order "
    "debug < info < warning < error (`level=warning` returns warnings and errors).\n"
    "- `since` (inclusive) and `until` (exclusive): ISO 8601 timestamps; without a zone they "
    "are UTC. `since` later than `until` is 422.\n"
    "- `limit` is capped at the server maximum page size."
)


@router.get(
    "/api/logs",
    response_model=LogPage,
    responses=responses(401, 403, 422),
    description=SEARCH_HELP,
)
async def search_logs(
    principal: Viewer,
    session: SessionDep,
    page: Page,
    query: Annotated[str | None, Query(max_length=500, description="full-text search")] = None,
    level: Annotated[Level | None, Query(description="minimum severity")] = None,
    source: Annotated[str | None, Query(max_length=32, description="e.g. validation")] = None,
    since: Annotated[datetime | None, Query(description="inclusive lower bound")] = None,
    until: Annotated[datetime | None, Query(description="exclusive upper bound")] = None,
    dashboard_id: Annotated[int | None, Query(ge=1, le=2_147_483_647)] = None,
) -> LogPage:
    """Search operational logs."""
    where = service.LogFilter(
        query=query,
        min_level=level,
        source=source,
        since=since,
        until=until,
        dashboard_id=dashboard_id,
    )
    rows, total = await service.search(
        session=session, where=where, limit=page.limit, offset=page.offset, actor=principal
    )
    return LogPage(items=[LogRead.model_validate(r) for r in rows], total=total)
