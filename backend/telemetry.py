"""The backend's side of operations: `/metrics`, the request id and trace id of each request,
and (when OTEL_EXPORTER_OTLP_ENDPOINT is set) the FastAPI and SQLAlchemy instrumentation."""

from __future__ import annotations

import time
from typing import Any

from fastapi import FastAPI
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from common import observability

SERVICE = "agent-chat-backend"
UNMATCHED = "unmatched"  # no route: a scan of random paths adds no label values

REQUESTS = Counter("http_requests_total", "HTTP requests answered", ("method", "route", "status"))
DURATION = Histogram(
    "http_request_duration_seconds",
    "Time to the end of the response body",
    ("method", "route"),
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


class RequestTelemetry:
    """Pure ASGI (so the request and trace ids are set for every line logged while serving,
    uvicorn's access line included): X-Request-ID in and out, and the HTTP metrics, labelled
    with the route template, never the raw path."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with observability.request_ids(scope) as rid:
            scope.setdefault("state", {})["request_id"] = rid
            await self._serve(scope, receive, send, rid)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, rid: str) -> None:
        status = 500
        start = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message.setdefault("headers", [])
                message["headers"] = [
                    *(h for h in message["headers"] if h[0].lower() != b"x-request-id"),
                    (b"x-request-id", rid.encode("latin-1")),
                ]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or UNMATCHED
            if template != "/metrics":
                method = scope.get("method", "GET")
                REQUESTS.labels(method, template, str(status)).inc()
                DURATION.labels(method, template).observe(time.perf_counter() - start)


def install(app: FastAPI) -> None:
    """`/metrics` (Prometheus text, not routed by the gateway), the request middleware, and
    the FastAPI instrumentation when tracing is on."""

    @app.get("/metrics", include_in_schema=False)
    async def metrics(request: Request) -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    app.add_middleware(RequestTelemetry)
    if observability.install_tracer_provider(SERVICE):
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

        # No span per ASGI send/receive message: one per request, and the SQL under it.
        FastAPIInstrumentor.instrument_app(
            app, excluded_urls="/healthz,/readyz,/metrics", exclude_spans=["receive", "send"]
        )


def instrument_engine(engine: AsyncEngine) -> Any:
    """A span per SQL statement of this engine (tracing on only)."""
    if not observability.tracing_enabled():
        return None
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor

    # The package's declared range stops below SQLAlchemy 2.1, whose engine events it uses
    # unchanged (tests/agent/test_telemetry.py sees the statement spans).
    return SQLAlchemyInstrumentor().instrument(engine=engine.sync_engine, skip_dep_check=True)
