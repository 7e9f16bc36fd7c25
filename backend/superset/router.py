"""Superset routes: an admin's on-demand sync of the staging Superset; a person's own Superset
sessions (person mode)."""

from __future__ import annotations

from fastapi import APIRouter, status

from backend.deps import Admin, SessionDep, SettingsDep, Viewer
from backend.errors import responses
from backend.superset import sessions, sync
from backend.superset.sessions import SessionCreate, SessionsRead
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


@router.get("/api/superset/session", response_model=SessionsRead, responses=responses(401, 403))
async def superset_sessions(
    principal: Viewer, session: SessionDep, settings: SettingsDep
) -> SessionsRead:
    """Whether you have your own Superset session in each environment (`SUPERSET__IDENTITY=
    person`), and as whom."""
    return await sessions.status(session=session, settings=settings, user_id=principal.user_id)


@router.post(
    "/api/superset/session",
    response_model=SessionsRead,
    responses=responses(401, 403, 404, 422, 503),
)
async def connect_superset(
    body: SessionCreate, principal: Viewer, session: SessionDep, settings: SettingsDep
) -> SessionsRead:
    """Connect one environment's Superset with your own account there (`provider` "ldap" or
    "db"; default "ldap" when LDAP__URL is set). The password is sent to Superset once and kept
    nowhere; wrong or empty credentials are 401 and nothing is stored."""
    return await sessions.connect(
        session=session, settings=settings, user_id=principal.user_id, data=body
    )


@router.delete(
    "/api/superset/session", status_code=status.HTTP_204_NO_CONTENT, responses=responses(401, 403)
)
async def forget_superset(principal: Viewer, session: SessionDep) -> None:
    """Forget your Superset sessions in every environment."""
    await sessions.forget(session=session, user_id=principal.user_id)
