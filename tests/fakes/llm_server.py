"""A scripted OpenAI-compatible chat-completions server: the one fake at the LLM boundary.

Serves `POST /v1/chat/completions` as JSON or SSE (text deltas, tool-call deltas with the
arguments split across chunks, a usage chunk when `stream_options.include_usage`), records every
request, and answers from a script:

- a queue of responses (`enqueue`), consumed first-in first-out, one per request;
- rules (`add_rule`): the first rule whose `match` occurs in the last message (by default only
  when that message is the user's) answers; a rule is reused until reset;
- otherwise the default response, a short text.

A response is a dict:
    {"text": "Hello there", "delay_ms": 25, "first_delay_ms": 0}   text split into word tokens
    {"tokens": 100, "delay_ms": 25}                                  "t0 t1 ... t99"
    {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}], "text": "..."}
    {"tool_calls": [{"name": "x", "raw_args": "{not json"}]}         malformed arguments
    {"status": 500}                                                  HTTP error (then next item)
    {"hang_s": 30}                                                   no answer for that long
    {"hang_after_tokens": 3, "text": "..."}                          stream 3 tokens then stall
    {"drop_after_tokens": 3, "text": "..."}                          stream 3 tokens then cut the
                                                                     connection (no end chunk)
    {"hold_after_tokens": 3, "text": "..."}                          stream 3 tokens, then the rest
                                                                     once `go_on()` (or POST
                                                                     /_go_on) is called
    {"text": "...", "usage": {"prompt_tokens": 120, "completion_tokens": 7}}  the usage reported

Control over HTTP (for other processes, e.g. browser tests): `POST /_script` with
`{"queue": [...], "rules": [...], "default": {...}}` (appends), `GET /_requests`,
`POST /_go_on`, `POST /_reset`. In-process: `FakeLLM().start()` runs it in a thread on a free port.
Command line: `python -m tests.fakes.llm_server --port P [--script file.json]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

DEFAULT_RESPONSE: dict[str, Any] = {"text": "Done."}
HOLD_S = 120.0  # the longest a held stream waits for `go_on`


class DroppedConnection(Exception):
    """Raised inside a streaming body: the server closes the connection mid-response."""


class _QuietDrops(logging.Filter):
    """Keep the scripted drops out of uvicorn's error log (they are not failures here)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, DroppedConnection):
                return False
            exc = exc.__cause__ or exc.__context__ or _first_of_group(exc)
        return True


def _first_of_group(exc: BaseException) -> BaseException | None:
    group = getattr(exc, "exceptions", None)
    return group[0] if group else None


logging.getLogger("uvicorn.error").addFilter(_QuietDrops())


class Script:
    """The responses to give and the requests received (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.queue: list[dict[str, Any]] = []
        self.rules: list[dict[str, Any]] = []
        self.default: dict[str, Any] = dict(DEFAULT_RESPONSE)
        self.requests: list[dict[str, Any]] = []
        self.held = threading.Event()  # set: a held stream goes on (`hold_after_tokens`)

    def reset(self) -> None:
        self.held.clear()
        with self._lock:
            self.queue.clear()
            self.rules.clear()
            self.default = dict(DEFAULT_RESPONSE)
            self.requests.clear()

    def load(self, data: dict[str, Any]) -> None:
        with self._lock:
            self.queue.extend(data.get("queue", []))
            self.rules.extend(data.get("rules", []))
            if "default" in data:
                self.default = data["default"]

    def record(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append({"body": body, "headers": headers, "at": time.time()})

    def recorded(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.requests)

    def next_response(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self.queue:
                return self.queue.pop(0)
            last = (body.get("messages") or [{}])[-1]
            text = _text(last.get("content"))
            for rule in self.rules:
                if rule.get("on", "user") not in ("any", last.get("role")):
                    continue
                if _matches(rule["match"], text):
                    return dict(rule["response"])
            return dict(self.default)


def _matches(pattern: str, text: str) -> bool:
    if pattern.startswith("re:"):
        return re.search(pattern[3:], text) is not None
    return pattern.lower() in text.lower()


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _tokens(spec: dict[str, Any]) -> list[str]:
    if "tokens" in spec and "text" not in spec:
        return [f"t{i} " for i in range(int(spec["tokens"]))]
    return re.findall(r"\S+\s*|\s+", str(spec.get("text", "")))


def _tool_calls(spec: dict[str, Any]) -> list[dict[str, Any]]:
    calls = []
    for i, call in enumerate(spec.get("tool_calls", [])):
        args = call.get("raw_args")
        if args is None:
            args = json.dumps(call.get("args", {}))
        calls.append(
            {
                "index": i,
                "id": call.get("id") or f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": call["name"], "arguments": args},
            }
        )
    return calls


def _usage(body: dict[str, Any], completion_tokens: int, spec: dict[str, Any]) -> dict[str, int]:
    if fixed := spec.get("usage"):  # {"prompt_tokens": P, "completion_tokens": C}: reported as is
        prompt, completion = int(fixed["prompt_tokens"]), int(fixed["completion_tokens"])
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    prompt = sum(len(_text(m.get("content"))) for m in body.get("messages", [])) // 4
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }


def _chunk(cid: str, model: str, delta: dict[str, Any], finish: str | None = None) -> str:
    payload = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }
    return f"data: {json.dumps(payload)}\n\n"


async def _hold(gate: threading.Event) -> AsyncIterator[str]:
    """Until `gate` is set: an SSE comment every second (ignored by clients), so that a held
    stream is not a stalled one to a client's read timeout."""
    now = time.monotonic()
    deadline, beat = now + HOLD_S, now + 1
    while not gate.is_set() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        if time.monotonic() >= beat:
            beat += 1
            yield ": held\n\n"


async def _stream(
    body: dict[str, Any], spec: dict[str, Any], gate: threading.Event
) -> AsyncIterator[str]:
    cid, model = f"chatcmpl-{uuid.uuid4().hex[:12]}", str(body.get("model", "fake"))
    delay = float(spec.get("delay_ms", 0)) / 1000
    await asyncio.sleep(float(spec.get("first_delay_ms", 0)) / 1000)
    yield _chunk(cid, model, {"role": "assistant", "content": ""})
    tokens = _tokens(spec)
    for n, token in enumerate(tokens):
        if "hang_after_tokens" in spec and n == int(spec["hang_after_tokens"]):
            await asyncio.sleep(3600)
        if "hold_after_tokens" in spec and n == int(spec["hold_after_tokens"]):
            async for comment in _hold(gate):
                yield comment
        if "drop_after_tokens" in spec and n == int(spec["drop_after_tokens"]):
            raise DroppedConnection()
        yield _chunk(cid, model, {"content": token})
        if delay:
            await asyncio.sleep(delay)
    calls = _tool_calls(spec)
    for call in calls:
        args = call["function"]["arguments"]
        head = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
        yield _chunk(cid, model, {"tool_calls": [head]})
        for part in (args[: len(args) // 2], args[len(args) // 2 :]):
            yield _chunk(
                cid,
                model,
                {"tool_calls": [{"index": call["index"], "function": {"arguments": part}}]},
            )
    yield _chunk(cid, model, {}, "tool_calls" if calls else "stop")
    if (body.get("stream_options") or {}).get("include_usage"):
        usage = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [],
            "usage": _usage(body, len(tokens) + len(calls), spec),
        }
        yield f"data: {json.dumps(usage)}\n\n"
    yield "data: [DONE]\n\n"


def _completion(body: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    calls = [{k: v for k, v in c.items() if k != "index"} for c in _tool_calls(spec)]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(_tokens(spec)) or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model", "fake")),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": _usage(body, len(_tokens(spec)) + len(calls), spec),
    }


def build_app(script: Script) -> Starlette:
    async def completions(request: Request) -> Response:
        body = await request.json()
        headers = {k.lower(): v for k, v in request.headers.items()}
        script.record(body, headers)
        spec = script.next_response(body)
        if "status" in spec:
            error = {"error": {"message": "scripted failure", "type": "server_error"}}
            return JSONResponse(error, status_code=int(spec["status"]))
        if "hang_s" in spec:
            await asyncio.sleep(float(spec["hang_s"]))
        if body.get("stream"):
            return StreamingResponse(
                _stream(body, spec, script.held), media_type="text/event-stream"
            )
        return JSONResponse(_completion(body, spec))

    async def load_script(request: Request) -> Response:
        script.load(await request.json())
        return JSONResponse({"ok": True})

    async def requests_(request: Request) -> Response:
        return JSONResponse(script.recorded())

    async def reset(request: Request) -> Response:
        script.reset()
        return JSONResponse({"ok": True})

    async def go_on(request: Request) -> Response:
        script.held.set()
        return JSONResponse({"ok": True})

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/chat/completions", completions, methods=["POST"]),
            Route("/_script", load_script, methods=["POST"]),
            Route("/_requests", requests_, methods=["GET"]),
            Route("/_reset", reset, methods=["POST"]),
            Route("/_go_on", go_on, methods=["POST"]),
            Route("/healthz", health, methods=["GET"]),
        ]
    )


class FakeLLM:
    """The fake server in a background thread of this process, with a direct script API."""

    def __init__(self, port: int | None = None) -> None:
        self.script = Script()
        self.port = port or _free_port()
        self._server = uvicorn.Server(
            uvicorn.Config(
                build_app(self.script), host="127.0.0.1", port=self.port, log_level="warning"
            )
        )
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def url(self) -> str:
        """The base URL clients use as LLM_API_BASE."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLM:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise TimeoutError("fake LLM did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=5)

    def enqueue(self, *responses: dict[str, Any]) -> None:
        """The next requests get these responses, in order."""
        self.script.load({"queue": list(responses)})

    def add_rule(self, match: str, response: dict[str, Any], *, on: str = "user") -> None:
        self.script.load({"rules": [{"match": match, "response": response, "on": on}]})

    def reset(self) -> None:
        self.script.reset()

    def go_on(self) -> None:
        """A stream held by `hold_after_tokens` sends the rest."""
        self.script.held.set()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received since the last reset."""
        return [r["body"] for r in self.script.recorded()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8400)
    parser.add_argument("--script", type=Path, help="JSON file: {queue, rules, default}")
    args = parser.parse_args()
    script = Script()
    if args.script:
        script.load(json.loads(args.script.read_text()))
    uvicorn.run(build_app(script), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
