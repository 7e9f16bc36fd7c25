"""Which synced Superset dashboards the acting person may see (person mode): the UUIDs their
own Superset lists, cached per person for `TTL_S` (a change in Superset reaches them within a
minute). A dashboard of the platform's own (not from Superset) is the platform's RBAC alone.
"""

from __future__ import annotations

import time
import uuid

from sqlalchemy import ColumnElement, select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.dashboards.models import Dashboard
from backend.errors import NotFound
from backend.superset import person
from backend.superset.client import client
from backend.superset.models import SupersetDashboard

TTL_S = 30.0
PAGE_SIZE = 100
ENVIRONMENT = "staging"  # the dashboards are synced from staging: what it lets them see

_cache: dict[tuple[int, uuid.UUID], tuple[float, frozenset[str]]] = {}


async def visible_uuids() -> frozenset[str] | None:
    """The acting person's visible dashboard UUIDs; None when nobody acts as a person (service
    mode, or the platform's own work)."""
    acting = person.current()
    if acting is None or not person.person_mode(acting.settings):
        return None
    key = (id(acting.settings), acting.user_id)
    cached = _cache.get(key)
    if cached is not None and time.monotonic() - cached[0] < TTL_S:
        return cached[1]
    superset = client(acting.settings, ENVIRONMENT)
    found: set[str] = set()
    page = 0
    while True:
        q = f"(columns:!(uuid),page:{page},page_size:{PAGE_SIZE})"
        body = await superset.json("GET", "/api/v1/dashboard/", params={"q": q})
        result = body.get("result") or []
        found.update(str(item["uuid"]) for item in result if item.get("uuid"))
        if len(result) < PAGE_SIZE:
            break
        page += 1
    if len(_cache) > 4096:
        _cache.clear()
    _cache[key] = (time.monotonic(), frozenset(found))
    return frozenset(found)


def forget(user_id: uuid.UUID) -> None:
    for key in [k for k in _cache if k[1] == user_id]:
        del _cache[key]


async def hidden_clause() -> ColumnElement[bool] | None:
    """A WHERE clause that drops the Superset dashboards hidden from the acting person."""
    visible = await visible_uuids()
    if visible is None:
        return None
    hidden = select(SupersetDashboard.dashboard_id).where(SupersetDashboard.uuid.not_in(visible))
    return Dashboard.id.not_in(hidden)


async def check(session: AsyncSession, dashboard_id: int) -> None:
    """NotFound when the acting person's Superset hides this dashboard."""
    acting = person.current()
    if acting is None or not person.person_mode(acting.settings):
        return  # service mode: no query at all
    uuid_ = await session.scalar(
        select(SupersetDashboard.uuid).where(SupersetDashboard.dashboard_id == dashboard_id)
    )
    if uuid_ is None:
        return
    visible = await visible_uuids()
    if visible is not None and uuid_ not in visible:
        raise NotFound(
            f"Dashboard {dashboard_id} not found", details={"dashboard_id": dashboard_id}
        )
