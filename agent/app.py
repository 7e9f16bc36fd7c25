"""The agent process: a FastAPI host app with the Gradio ChatInterface at /api/agent/gradio."""

from __future__ import annotations

import logging
import os
import typing
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import gradio as gr
import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from agent import telemetry
from agent.access_tokens import token_checker
from agent.auth import User, UserAuthMiddleware, verify_caller
from agent.backend_client import UNANSWERED, BackendClient, BackendError
from agent.config import Settings
from agent.documents.uploads import uploads_only
from agent.external.middleware import ExternalTools
from agent.external.servers import ExternalServers
from agent.graph import build_agent, build_model, close_model, model_note, open_checkpointer
from agent.mcp_server.catalogue import Catalogue
from agent.mcp_server.endpoint import McpEndpoint
from agent.mcp_server.server import PATH as MCP_PATH
from agent.mcp_server.server import Parts, build_server
from agent.perf.gradio_config import freeze_configs
from agent.perf.matplotlib_absent import mark_matplotlib_absent
from agent.run import Runner
from agent.runs import internal, takeover
from agent.runs.cancel import CancelMarker, Cancels
from agent.tools.registry import build_tools
from agent.usage import usage_hooks
from common import heap, observability

log = logging.getLogger(__name__)

GRADIO_PATH = "/api/agent/gradio"
MAX_CONCURRENT_RUNS = 1000  # Gradio queue slots; each run is a coroutine, not a thread
# The upload route cuts off uploads far past the file limit; the exact per-file check (with a
# FILE_TOO_LARGE stream error naming the file and the limit) happens in the run.
UPLOAD_SLACK_BYTES = 1024 * 1024


class _Holder:
    """The Runner, built at start-up (the pool and checkpointer need a running event loop)."""

    runner: Runner | None = None


def _chat_interface(holder: _Holder, settings: Settings) -> gr.ChatInterface:
    async def chat(
        message: dict[str, Any],
        history: list[Any],
        conversation_id: str,
        action: str,
        focus: str,
        options: str,
        request: gr.Request,
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """Send a message to the assistant, or confirm/reject the pending action."""
        if holder.runner is None:
            raise gr.Error("The agent is starting; try again in a moment.")
        headers = dict(request.headers) if request is not None else {}
        session = request.session_hash if request is not None else None
        async for messages in holder.runner.chat(
            message, conversation_id, action, focus, options, headers, session
        ):
            yield messages

    # Gradio reads the fn's type hints on every submit; resolve the postponed (string)
    # annotations once here instead of compiling them again for every run.
    chat.__annotations__ = typing.get_type_hints(chat)
    demo = gr.ChatInterface(
        chat,
        multimodal=True,
        # Neither the message box nor the page's chat log copies a file that was not uploaded
        # through this app (agent/documents/uploads.py): no server file enters Gradio's cache.
        textbox=uploads_only(gr.MultimodalTextbox(show_label=False, label="Message", scale=7)),
        chatbot=uploads_only(gr.Chatbot(label="Chatbot", scale=1)),
        additional_inputs=[
            gr.Textbox(label="conversation_id", value=""),
            gr.Textbox(label="action", value=""),
            gr.Textbox(label="focus", value=""),
            gr.Textbox(label="options", value=""),
        ],
        api_name="chat",
        concurrency_limit=None,
        title="agent-chat" + (f" ({note})" if (note := model_note(settings)) else ""),
        analytics_enabled=False,
        save_history=False,
    )
    demo.max_threads = MAX_CONCURRENT_RUNS  # the queue's slot count comes from max_threads
    demo.queue(default_concurrency_limit=None, max_size=None)
    return demo


async def _warm_up(client: BackendClient) -> None:
    """Fetch the service JWT now rather than on the first person's request."""
    try:
        await client.service_token()
    except (BackendError, *UNANSWERED) as exc:  # the backend may start after us
        log.info("service token not fetched at start-up: %s", exc)


def build_app(settings: Settings) -> FastAPI:
    """The host app: /healthz, and Gradio (every route behind the user-JWT middleware)."""
    holder = _Holder()
    cancels = Cancels()
    mark_matplotlib_absent()
    mcp = Parts()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if not settings.database_url:
            raise ValueError("DATABASE_URL is required for the agent's checkpoints")
        client = BackendClient(settings)
        telemetry.instrument_backend_client(client._http)
        async with open_checkpointer(settings.database_url) as checkpointer:
            model, tools = build_model(settings), build_tools(client)
            external = ExternalTools(
                ExternalServers(client, settings.mcp_key, settings.agent.mcp_refresh_s),
                client,
                settings.agent.mcp_timeout_s,
                budget_chars=settings.agent.external_tools_budget_chars,
                description_chars=settings.agent.tool_description_chars,
            )
            agent = build_agent(
                settings, model=model, tools=tools, checkpointer=checkpointer, external=external
            )
            holder.runner = Runner(
                settings=settings,
                client=client,
                agent=agent,
                model=model,
                tools=tools,
                hooks=[usage_hooks(client), run_telemetry],
                cancels=cancels,
            )
            mcp.catalogue, mcp.client = Catalogue(holder.runner.tools), client
            await _warm_up(client)
            heap.settle()  # what start-up built lives as long as the process
            if note := model_note(settings):
                log.warning("LLM_API_BASE is unset: using the %s", note)
            try:
                yield
            finally:
                runner, holder.runner = holder.runner, None
                mcp.catalogue = mcp.client = None
                if runner is not None:
                    await runner.viewers.aclose()
                await close_model(model)
                await client.aclose()

    app = FastAPI(title="agent-chat agent", lifespan=lifespan, docs_url=None, redoc_url=None)
    run_telemetry = telemetry.install(app)  # /metrics, and traces when OTLP is configured

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness (no authentication)."""
        return {"status": "ok" if holder.runner is not None else "starting"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        """Readiness: the runs can start (checkpointer open, model and tools built)."""
        ready = holder.runner is not None
        return JSONResponse({"status": "ready" if ready else "starting"}, 200 if ready else 503)

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    demo = _chat_interface(holder, settings)
    app = gr.mount_gradio_app(
        app,
        demo,
        path=GRADIO_PATH,
        ssr_mode=False,
        show_error=False,
        max_file_size=settings.agent.max_file_bytes + UPLOAD_SLACK_BYTES,
        footer_links=[],
        # Gradio 6 records every finished call for its run-history page (/gradio_api/runs),
        # and uploads it to a Hugging Face bucket a request names in a header when a token
        # resolves: none of it is ours to serve, and it cost a write per call.
        run_history=False,
    )
    freeze_configs(demo)
    app.include_router(
        internal.router(settings, lambda: holder.runner.live if holder.runner else None)
    )
    app.include_router(takeover.router())  # which process serves here (a lease's holder)
    app.add_middleware(CancelMarker, cancels=cancels, prefix=GRADIO_PATH)  # inside the auth check
    check_token = token_checker(lambda: holder.runner.client if holder.runner else None)

    async def authenticate(token: str | None) -> User:
        return await verify_caller(settings, token, check_token)

    # The MCP server (CONTRACT.md): its own bearer check, before the SDK sees a request.
    app.router.add_route(
        MCP_PATH, McpEndpoint(build_server(lambda: mcp), authenticate), ["GET", "POST", "DELETE"]
    )
    app.add_middleware(
        UserAuthMiddleware, settings=settings, prefix=GRADIO_PATH, check_token=check_token
    )
    app.add_middleware(telemetry.RequestIds)
    return app


def main(host: str, port: int, settings: Settings | None = None) -> None:
    """Run the agent with uvicorn."""
    settings = settings or Settings()
    app = build_app(settings)
    heap.serving()
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=settings.log_level.lower(),
        log_config=observability.uvicorn_log_config(),
        timeout_graceful_shutdown=3,  # open event streams must not hold a restart
    )
