"""Deploy a version of a Superset dashboard to an environment by import, with the safe
promotion: the target's database connections are never touched, datasets are bound to the
target's own database of the same name, and charts, datasets and the dashboard are overwritten
(assets import, sparse) so a committed chart title is deployed too."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.codes import Code
from backend.config import Settings
from backend.dashboards.models import Dashboard, DashboardVersion
from backend.errors import Conflict, NotFound
from backend.superset import bundle, person
from backend.superset.client import SupersetClient, SupersetError, client, superset_message
from backend.superset.models import SupersetDashboard


async def _databases(superset: SupersetClient) -> dict[str, str]:
    """The target's databases: name -> UUID."""
    q = "(columns:!(database_name,uuid),page:0,page_size:100)"
    body = await superset.json("GET", "/api/v1/database/", params={"q": q})
    return {str(d["database_name"]): str(d["uuid"]) for d in body.get("result") or []}


async def push(
    *,
    session: AsyncSession,
    settings: Settings,
    dashboard: Dashboard,
    version: DashboardVersion,
    environment: str,
) -> int:
    """Import `version` into `environment`'s Superset; its dashboard id there."""
    superset = client(settings, environment)
    files = version.definition["superset"]["files"]
    try:
        databases = await _databases(superset)
    except NotFound as exc:  # person mode: their Superset hides the target's databases
        raise person.forbidden(environment, "the target's databases are hidden") from exc
    try:
        data = bundle.promotion(files, databases)
    except bundle.MissingDatabase as exc:
        if person.current() is not None:  # their Superset does not show them that database
            raise person.forbidden(environment, f"no database named {exc.name!r}") from exc
        raise Conflict(
            f"The {environment} Superset has no database named {exc.name!r} to bind the "
            "dashboard's datasets to",
            code=Code.SUPERSET_NO_DATABASE,
            details={"environment": environment, "database_name": exc.name},
        ) from exc
    response = await superset.request(
        "POST",
        "/api/v1/assets/import/",
        files={"bundle": ("bundle.zip", data, "application/zip")},
        data={"sparse": "true"},
    )
    if person.current() is not None and (response.status_code == 403 or response.is_redirect):
        raise person.forbidden(environment, superset_message(response))
    if response.is_error:
        raise SupersetError(
            f"The {environment} Superset refused the import: {superset_message(response)}",
            details={"environment": environment},
        )
    uuid = version.definition["superset"]["uuid"]
    found = await superset.json("GET", f"/api/v1/dashboard/{uuid}")
    target_id = int(found["result"]["id"])
    link = await session.scalar(
        select(SupersetDashboard).where(SupersetDashboard.dashboard_id == dashboard.id)
    )
    if link is not None:
        setattr(link, f"{environment}_id", target_id)
    return target_id
