"""The owner's side of a relayed viewer (agent/runs/viewers.py): its live runs, by conversation,
on the host app (not under the Gradio path, so the gateway never routes it).

Each request carries the person's own JWT: it is verified here and must be the run's owner's,
else 404, so a replica (or anyone on the network) reaches only what that person could.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse

from agent.auth import AuthError, bearer_token, verify_user
from agent.config import Settings
from agent.runs.live import LiveRun, LiveRuns
from agent.runs.viewers import STOP_WAIT_S
from agent.stream import updates

PREFIX = "/internal/runs"


def router(settings: Settings, runs: Callable[[], LiveRuns | None]) -> APIRouter:
    api = APIRouter(prefix=PREFIX, include_in_schema=False)

    def owned(request: Request, conversation_id: str) -> LiveRun:
        try:
            user = verify_user(settings, bearer_token(dict(request.headers)))
        except AuthError as exc:
            raise HTTPException(401, exc.message) from exc
        live = runs()
        run = live.get(conversation_id) if live is not None else None
        if run is None or run.user_id != user.user_id:
            raise HTTPException(404, "No live run")
        return run

    @api.get("/{conversation_id}/stream")
    async def stream(conversation_id: str, request: Request) -> StreamingResponse:
        run = owned(request, conversation_id)

        async def lines() -> AsyncIterator[str]:
            async for value in updates(run.turn):
                yield json.dumps(value, default=str) + "\n"
            yield '{"end": true}\n'

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    @api.post("/{conversation_id}/stop")
    async def stop(conversation_id: str, request: Request) -> JSONResponse:
        run = owned(request, conversation_id)
        run.stop()
        await run.ended(STOP_WAIT_S)
        return JSONResponse({"messages": run.turn.snapshot()})

    return api
