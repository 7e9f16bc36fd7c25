"""Gradio's cancel of a job is an explicit stop; a dropped connection is not.

Both end the Gradio job the same way (its task is cancelled), so the run cannot tell them apart
from inside. This ASGI middleware sees the authenticated `/gradio_api/cancel` request first and
marks its session: the run started by that session's job then stops (agent/run.py), while a
job whose viewer merely went away leaves its run going (CONTRACT.md, "Runs outlive the page").
"""

from __future__ import annotations

import json
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MARK_TTL_S = 30.0
MAX_BODY_BYTES = 4096


class Cancels:
    """Sessions whose jobs a person cancelled, for MARK_TTL_S."""

    def __init__(self) -> None:
        self._marks: dict[str, float] = {}

    def mark(self, session_hash: str) -> None:
        now = time.monotonic()
        self._marks = {s: t for s, t in self._marks.items() if now - t < MARK_TTL_S}
        self._marks[session_hash] = now

    def cancelled(self, session_hash: str | None) -> bool:
        marked = self._marks.get(session_hash or "")
        return marked is not None and time.monotonic() - marked < MARK_TTL_S


class CancelMarker:
    """Marks the session of every `{prefix}/gradio_api/cancel` request, then passes it on."""

    def __init__(self, app: ASGIApp, *, cancels: Cancels, prefix: str) -> None:
        self.app = app
        self.cancels = cancels
        self.path = prefix.rstrip("/") + "/gradio_api/cancel"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            if (
                message["type"] != "http.request"
                or not message.get("more_body")
                or size > MAX_BODY_BYTES
            ):
                break
        if size <= MAX_BODY_BYTES:
            try:
                body = json.loads(b"".join(m.get("body", b"") for m in messages) or b"{}")
            except ValueError:
                body = {}
            if isinstance(body, dict) and isinstance(body.get("session_hash"), str):
                self.cancels.mark(body["session_hash"])

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)
