"""The MCP endpoint: Streamable HTTP without server-side sessions, so any replica serves any
request (a restart loses nothing).

Each POST gets a fresh transport and server session, as in the SDK's stateless mode. The two
things MCP keeps per session are carried by the request instead:
- what the client declared at `initialize` (the elicitation capability) is in the session id
  this endpoint hands out (`Mcp-Session-Id`), which the client sends back on every request;
- an elicitation is asked and answered while its `tools/call` request is still open: the
  client's answer (a POST carrying a JSON-RPC response) is handed to that request's transport.
  The gateway sends a session's requests to one agent (by the session header), so the answer
  finds the waiting call; an answer that finds none is dropped, and the call is refused.

The caller's bearer token (a user JWT or a personal access token) is checked on every request
before the SDK sees it.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskStatus
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from starlette.datastructures import Headers
from starlette.types import Message, Receive, Scope, Send

from agent.auth import AuthError, User, bearer_token
from agent.errors import AgentError, Code

MAX_BODY_BYTES = 4 * 1024 * 1024
SESSION_ID = re.compile(r"^mcp1-[en]-[0-9a-f]{32}$")
STATE_KEY = "mcp_request"  # where the handlers find this request's McpRequest (Request.state)

Authenticate = Callable[[str | None], Awaitable[User]]


def new_session_id(*, elicitation: bool) -> str:
    return f"mcp1-{'e' if elicitation else 'n'}-{secrets.token_hex(16)}"


@dataclass
class McpRequest:
    """What a handler needs of the HTTP request it serves."""

    caller: User
    session_id: str | None
    transport: StreamableHTTPServerTransport
    waiting: dict[str, McpRequest] = field(repr=False)

    @property
    def can_elicit(self) -> bool:
        return self.session_id is not None and self.session_id.startswith("mcp1-e-")


class McpEndpoint:
    """An ASGI app serving one low-level MCP `Server` over stateless Streamable HTTP."""

    def __init__(self, server: Server[Any, Any], authenticate: Authenticate) -> None:
        self.server = server
        self.authenticate = authenticate
        # Session id -> the call waiting for that session's elicitation answer.
        self.waiting: dict[str, McpRequest] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = Headers(scope=scope)
        try:
            caller = await self.authenticate(bearer_token(headers))
        except AuthError as exc:
            await _reply(send, 401, Code.UNAUTHORIZED, exc.message)
            return
        except AgentError as exc:
            await _reply(send, 503, exc.code, exc.message)
            return
        if scope["method"] == "DELETE":  # closing a session: there is nothing to forget
            await _reply(send, 200, None, None)
            return
        if scope["method"] != "POST":  # no stream outside a request: nothing is pushed
            await _reply(send, 405, Code.METHOD_NOT_ALLOWED, "POST only")
            return
        body = await _body(receive)
        if body is None:
            await _reply(send, 413, Code.PAYLOAD_TOO_LARGE, "The request body is too large")
            return
        await self._post(scope, _replay(body, receive), send, headers, caller, body)

    async def _post(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        caller: User,
        body: bytes,
    ) -> None:
        message = _json(body)
        session_id = headers.get("mcp-session-id")
        if session_id is not None and not SESSION_ID.fullmatch(session_id):
            await _reply(send, 404, Code.NOT_FOUND, "Unknown MCP session: initialize again")
            return
        waiting = self.waiting.get(session_id or "")
        # Only the person who was asked can answer (the same user, whatever token they use).
        if _is_answer(message) and waiting is not None and waiting.caller.user_id == caller.user_id:
            await waiting.transport.handle_request(scope, receive, send)
            return
        if _method(message) == "initialize":
            session_id = new_session_id(elicitation=_declares_elicitation(message))
        transport = StreamableHTTPServerTransport(
            mcp_session_id=session_id, is_json_response_enabled=False, event_store=None
        )
        state = scope.setdefault("state", {})
        state[STATE_KEY] = McpRequest(caller, session_id, transport, self.waiting)
        async with anyio.create_task_group() as tasks:
            await tasks.start(self._serve, transport)
            try:
                await transport.handle_request(scope, receive, send)
            finally:
                with anyio.CancelScope(shield=True):
                    await transport.terminate()

    async def _serve(
        self,
        transport: StreamableHTTPServerTransport,
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        async with transport.connect() as (read, write):
            task_status.started()
            options = self.server.create_initialization_options()
            await self.server.run(read, write, options, stateless=True)


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None  # the SDK's transport answers the parse error


def _method(message: Any) -> str | None:
    return message.get("method") if isinstance(message, dict) else None


def _is_answer(message: Any) -> bool:
    """A JSON-RPC response (to a request the server sent: an elicitation)."""
    return isinstance(message, dict) and "method" not in message and "id" in message


def _declares_elicitation(message: dict[str, Any]) -> bool:
    capabilities = (message.get("params") or {}).get("capabilities") or {}
    return isinstance(capabilities, dict) and capabilities.get("elicitation") is not None


async def _body(receive: Receive) -> bytes | None:
    """The whole request body; None past MAX_BODY_BYTES."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the body already read once, then the client's own (its
    disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _reply(send: Send, status: int, code: str | None, message: str | None) -> None:
    body = (
        b""
        if code is None
        else json.dumps({"error": {"code": code, "message": message, "details": {}}}).encode()
    )
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
