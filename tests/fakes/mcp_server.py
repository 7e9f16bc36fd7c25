"""An external MCP server for the tests, made with the `mcp` SDK (FastMCP, Streamable HTTP at
/mcp): `python -m tests.fakes.mcp_server PORT SECRET`. Every request must carry
`X-Api-Key: SECRET` (401 otherwise), so a test sees the sealed header reach the server.

Tools: `echo(text)`, `wipe(target)` (a test marks it as needing confirmation; it records each
run in WIPED_FILE when that variable names a file), `slow(seconds)`, `fail()` (an error result),
`big()` (a long result)."""

from __future__ import annotations

import asyncio
import os
import sys

import uvicorn
from mcp.server.fastmcp import FastMCP
from starlette.types import ASGIApp, Receive, Scope, Send

mcp = FastMCP("fake-external", stateless_http=True, json_response=True)


@mcp.tool()
def echo(text: str) -> str:
    """Say `text` back."""
    return f"echo: {text}"


@mcp.tool()
def wipe(target: str) -> str:
    """Wipe `target` (dangerous: the test marks it for confirmation)."""
    if path := os.environ.get("WIPED_FILE"):
        with open(path, "a") as out:
            out.write(target + "\n")
    return f"wiped {target}"


@mcp.tool()
async def slow(seconds: float) -> str:
    """Answer after `seconds`."""
    await asyncio.sleep(seconds)
    return "slept"


@mcp.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("the fake tool failed on purpose")


@mcp.tool()
def big() -> str:
    """A result far longer than any tool result the agent keeps."""
    return "x" * 50_000


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
