"""Metrics, traces and request ids of the agent process (docs/operations.md)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.types import ASGIApp, Receive, Scope, Send

from agent.hooks import HookFactory
from agent.telemetry import hook
from common import observability

SERVICE = "agent-chat-agent"


class RequestIds:
    """Pure ASGI: the request id and trace id of each HTTP request, for its log lines."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with observability.request_ids(scope):
            await self.app(scope, receive, send)


def install(app: FastAPI) -> HookFactory:
    """`/metrics` on the host app, the tracer provider when tracing is on; the run hook."""

    @app.get("/metrics", include_in_schema=False)
    async def metrics(request: Request) -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    tracing = observability.install_tracer_provider(SERVICE)
    return hook.factory(tracing)


def instrument_backend_client(http: Any) -> None:
    """Spans (and a propagated traceparent) for the agent's requests to the backend."""
    if observability.tracing_enabled():
        from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

        HTTPXClientInstrumentor.instrument_client(http)
