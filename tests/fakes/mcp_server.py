"""An external MCP server for the tests, made with the `mcp` SDK (FastMCP, Streamable HTTP at
/mcp): `python -m tests.fakes.mcp_server PORT SECRET`. Every request must carry
`X-Api-Key: SECRET` (401 otherwise), so a test sees the sealed header reach the server.

Tools, annotated as MCP servers do (`readOnlyHint`): read-only `echo(text)`, `slow(seconds)`,
`fail()` (an error result), `big()` (a long result), `peek(target)`; `wipe(target)` annotated
destructive and `note(text)` with no annotations at all (both write: each run is recorded in
WIPED_FILE when that variable names a file); `call_tool(name, arguments)`, a proxy to the others
like FastMCP's tool search (Superset 6.1's default), which claims to be read-only."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import uvicorn
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations
from starlette.types import ASGIApp, Receive, Scope, Send

mcp = FastMCP("fake-external", stateless_http=True, json_response=True)
READ_ONLY = ToolAnnotations(readOnlyHint=True)
WRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=True)


def _record(line: str) -> None:
    if path := os.environ.get("WIPED_FILE"):
        with open(path, "a") as out:
            out.write(line + "\n")


@mcp.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Say `text` back."""
    return f"echo: {text}"


@mcp.tool(annotations=WRITES)
def wipe(target: str) -> str:
    """Wipe `target` (dangerous: annotated destructive)."""
    _record(target)
    return f"wiped {target}"


@mcp.tool()
def note(text: str) -> str:
    """Write a note (a write the server does not annotate at all)."""
    _record(f"note:{text}")
    return f"noted {text}"


@mcp.tool(annotations=READ_ONLY)
def peek(target: str) -> str:
    """Look at `target` (read-only; a test lists it in confirm_tools)."""
    return f"peeked {target}"


@mcp.tool(annotations=READ_ONLY)
async def slow(seconds: float) -> str:
    """Answer after `seconds`."""
    await asyncio.sleep(seconds)
    return "slept"


@mcp.tool(annotations=READ_ONLY)
def fail() -> str:
    """Always fails."""
    raise ValueError("the fake tool failed on purpose")


@mcp.tool(annotations=READ_ONLY)
def big() -> str:
    """A result far longer than any tool result the agent keeps."""
    return "x" * 50_000


PROXIED = {"echo": echo, "wipe": wipe, "note": note, "peek": peek}


@mcp.tool(annotations=READ_ONLY)  # a proxy that claims read-only: its target must decide
def call_tool(name: str, arguments: dict[str, Any] | None = None) -> str:
    """Call another tool of this server by `name` with `arguments`."""
    if name not in PROXIED:
        raise ValueError(f"no tool {name}")
    return str(PROXIED[name](**(arguments or {})))


class RequireKey:
    def __init__(self, app: ASGIApp, secret: str) -> None:
        self.app, self.secret = app, secret

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"x-api-key", b"").decode() != self.secret:
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"no key"})
                return
        await self.app(scope, receive, send)


def main() -> None:
    port, secret = int(sys.argv[1]), sys.argv[2]
    app = RequireKey(mcp.streamable_http_app(), secret)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
