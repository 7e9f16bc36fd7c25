"""Superset routes: an admin's on-demand sync of the staging Superset."""

from __future__ import annotations

from fastapi import APIRouter

from backend.deps import Admin, SessionDep, SettingsDep
from backend.errors import responses
from backend.superset import sync
from backend.superset.sync import SyncRead

router = APIRouter(tags=["superset"])


@router.post(
    "/api/admin/superset/sync", response_model=SyncRead, responses=responses(401, 403, 404, 503)
)
async def sync_superset(principal: Admin, session: SessionDep, settings: SettingsDep) -> SyncRead:
    """Read every dashboard of the staging Superset (charts, datasets, export bundle) into the
    platform: `{dashboards, charts}` read, of which `created` new and `changed` new versions.
    404 when no Superset is configured, 503 SUPERSET_UNAVAILABLE when it does not answer."""
    return await sync.sync(session=session, settings=settings, actor=principal)
