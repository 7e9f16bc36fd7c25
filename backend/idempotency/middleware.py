"""The ASGI side of `Idempotency-Key`: check the header of every write route, hash its body
as it streams in, and keep the answer of a claimed write before the client gets it.

The answer is held back until it is stored (a few milliseconds), so a client that has the
answer can always have it again; a replica that dies after the write's commit and before this
store leaves a key without an answer (409 IDEMPOTENCY_KEY_IN_PROGRESS for its repeats).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from sqlalchemy.exc import SQLAlchemyError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.codes import Code
from backend.errors import envelope
from backend.idempotency import service
from backend.idempotency.service import BODY_SHA, CLAIMED, HEADER, REPLAYED, Claim, Replayed

log = logging.getLogger(__name__)
_HEADER = HEADER.lower().encode()


def _key(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == _HEADER:
            return str(value.decode("latin-1"))
    return None


class IdempotencyMiddleware:
    """Pure ASGI, so an answer that is not a claimed write streams through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not service.applies(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        key = _key(scope)
        if key is None:
            await self.app(scope, receive, send)
            return
        if not service.valid(key):
            refused = envelope(
                422,
                Code.INVALID_INPUT,
                f"{HEADER} must be 1-64 visible ASCII characters",
                {"header": HEADER},
            )
            await refused(scope, receive, send)
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        digest = hashlib.sha256()

        async def hashing() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                digest.update(message.get("body", b""))
                if not message.get("more_body", False):
                    state[BODY_SHA] = digest.hexdigest()
            return message

        held: list[Message] = []

        async def holding(message: Message) -> None:
            if state.get(CLAIMED) is None or message["type"] not in (
                "http.response.start",
                "http.response.body",
            ):
                await send(message)
                return
            held.append(message)

        try:
            await self.app(scope, hashing, holding)
        except BaseException:
            claim = state.get(CLAIMED)
            if claim is not None:
                await _store(scope, claim, 500, None, b"")
            raise
        claim = state.get(CLAIMED)
        if claim is not None and held:
            start, body = held[0], b"".join(m.get("body", b"") for m in held[1:])
            content_type = next(
                (v.decode("latin-1") for k, v in start.get("headers", []) if k == b"content-type"),
                None,
            )
            await _store(scope, claim, start["status"], content_type, body)
        for message in held:
            await send(message)


async def _store(
    scope: Scope, claim: Claim, status: int, content_type: str | None, body: bytes
) -> None:
    try:
        state = scope["app"].state
        await service.record(
            state.engine, claim, status, content_type, body, state.settings.mcp_key
        )
    except (SQLAlchemyError, OSError) as exc:  # the answer still goes out; a repeat gets 409
        log.warning("the answer under an Idempotency-Key was not stored: %s", type(exc).__name__)


def install(app: FastAPI) -> None:
    """The middleware and the rendering of a replayed answer."""

    @app.exception_handler(Replayed)
    async def _replayed(request: Request, exc: Replayed) -> Response:
        return Response(
            exc.body,
            status_code=exc.status_code,
            media_type=exc.content_type,
            headers={REPLAYED: "true"},
        )

    app.add_middleware(IdempotencyMiddleware)
