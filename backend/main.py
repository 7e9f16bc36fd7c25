"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from sqlalchemy import text

from backend import db, telemetry
from backend.access_tokens.router import router as access_tokens_router
from backend.assistant.router import router as conversations_router
from backend.attachments.router import router as attachments_router
from backend.audit.router import router as audit_router
from backend.auth import log_redaction
from backend.auth import service as auth_service
from backend.auth.ldap import LdapDirectory
from backend.auth.oidc import OidcProvider
from backend.auth.router import router as auth_router
from backend.auth.sso_router import router as sso_router
from backend.config import Settings
from backend.conversations.checkpoints import Checkpoints
from backend.dashboards import sources as dashboard_sources
from backend.dashboards.router import router as dashboards_router
from backend.datasources.engines import dispose_all as dispose_datasource_engines
from backend.datasources.router import router as datasources_router
from backend.debug.router import router as debug_router
from backend.errors import ServiceUnavailable, install_handlers, install_openapi
from backend.feedback.router import router as feedback_router
from backend.idempotency import middleware as idempotency
from backend.idempotency import service as idempotency_keys
from backend.knowledge.router import router as knowledge_router
from backend.mcp_tools.router import router as tool_calls_router
from backend.oplogs.router import router as oplogs_router
from backend.retention.sweep import run_periodically as run_retention
from backend.runs.router import router as runs_router
from backend.schedules.queue import ScheduleQueue
from backend.schedules.router import router as schedules_router
from backend.sharing.router import router as sharing_router
from backend.storage.router import router as storage_router
from backend.superset import client as superset_client
from backend.superset import sessions as superset_sessions
from backend.superset import sync as superset_sync
from backend.superset.router import router as superset_router
from backend.superset.source import SUPERSET
from backend.usage.router import router as usage_router
from backend.workflows import loader as workflow_loader
from backend.workflows.router import router as workflows_router
from common import heap

log = logging.getLogger("backend")

ROUTERS = (
    auth_router,
    sso_router,
    access_tokens_router,
    conversations_router,
    runs_router,
    attachments_router,
    audit_router,
    datasources_router,
    dashboards_router,
    storage_router,
    oplogs_router,
    knowledge_router,
    workflows_router,
    debug_router,
    usage_router,
    superset_router,
    tool_calls_router,
    feedback_router,
    sharing_router,
    schedules_router,
)


def create_app(settings: Settings) -> FastAPI:
    """Build the app; the engine is created in the lifespan, never at import time."""
    if not settings.database_url:
        raise ValueError("settings.database_url must be resolved before create_app()")
    dashboard_sources.install(SUPERSET)
    auth_service.on_directory_sign_in(superset_sessions.open_at_sign_in)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = db.create_engine(settings.database_url or "")
        app.state.engine = engine
        telemetry.instrument_engine(engine)
        app.state.session_factory = db.session_factory(engine)
        retention = (
            asyncio.create_task(run_retention(engine, settings.retention), name="retention")
            if settings.retention.enabled
            else None
        )
        # the keys of writes older than 24 hours (backend/idempotency)
        keys = asyncio.create_task(idempotency_keys.sweep_periodically(engine), name="keys")
        superset = (
            asyncio.create_task(
                superset_sync.run_periodically(app.state.session_factory, settings),
                name="superset-sync",
            )
            if settings.superset.enabled
            else None
        )
        schedules = ScheduleQueue(settings, app.state.session_factory)
        await schedules.start(worker=settings.schedules.enabled)
        app.state.schedule_queue = schedules
        heap.settle()  # what start-up built lives as long as the process
        try:
            yield
        finally:
            await schedules.stop()
            if superset is not None:
                superset.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await superset
            keys.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keys
            await superset_client.close_all()
            if retention is not None:
                retention.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await retention
            await engine.dispose()
            dispose_datasource_engines()

    app = FastAPI(
        title="agent-chat backend",
        version="0.1.0",
        description="Identity, conversations, RBAC, audit and the BI domain for agent-chat.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.checkpoints = Checkpoints(settings.database_url)
    # sign-in through the organisation (README): each is None when its variables are unset
    app.state.oidc = OidcProvider(settings.oidc) if settings.oidc.enabled else None
    app.state.ldap = LdapDirectory(settings.ldap) if settings.ldap.enabled else None
    log_redaction.install()  # no OIDC code or state in the access log
    # A bad workflow file stops the start here, naming the file and the field.
    app.state.workflows = workflow_loader.load(settings.workflow_folder)
    install_handlers(app)
    install_openapi(app)

    idempotency.install(app)  # added first: inside the request telemetry, which counts it
    telemetry.install(app)

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], responses={503: {"description": "Database unreachable"}})
    async def readyz(request: Request) -> dict[str, str]:
        """Readiness: the database answers."""
        try:
            async with request.app.state.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception as exc:  # any driver failure means "not ready"
            log.warning("readiness check failed: %s", type(exc).__name__)
            raise ServiceUnavailable("Database unreachable") from exc
        return {"status": "ready"}

    for router in ROUTERS:
        app.include_router(router)
    return app
