"""Gradio's own HTTP API driven with plain httpx, the way an attacker would: no upload first,
any payload. `call` uses the named-endpoint route; `join` the queue route the web client uses."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx

from tests.agent.support import GRADIO, Messages


def _events(text: str) -> list[tuple[str, Any]]:
    """(event, data) pairs of an SSE body."""
    found: list[tuple[str, Any]] = []
    event = "message"
    for line in text.splitlines():
        if line.startswith("event:"):
            event = line.partition(":")[2].strip()
        elif line.startswith("data:"):
            raw = line.partition(":")[2].strip()
            found.append((event, json.loads(raw) if raw else None))
    return found


def call(
    base_url: str,
    token: str,
    data: list[Any],
    timeout: float = 60,
    extra_headers: dict[str, str] | None = None,
) -> list[Messages]:
    """POST /gradio_api/call/chat, then read its event stream; every streamed value."""
    headers = {"Authorization": f"Bearer {token}", **(extra_headers or {})}
    with httpx.Client(base_url=base_url + GRADIO, headers=headers, timeout=timeout) as client:
        started = client.post("/gradio_api/call/chat", json={"data": data})
        started.raise_for_status()
        event_id = started.json()["event_id"]
        stream = client.get(f"/gradio_api/call/chat/{event_id}")
        stream.raise_for_status()
    outputs: list[Messages] = []
    for event, payload in _events(stream.text):
        if event == "error":
            raise RuntimeError(f"the call failed: {payload}")
        if event in ("generating", "complete") and payload:
            outputs.append(list(payload[0] or []))
    return outputs


def fn_index(base_url: str, token: str, api_name: str = "chat") -> int:
    """The queue index of a named endpoint, from Gradio's /config."""
    headers = {"Authorization": f"Bearer {token}"}
    config = httpx.get(f"{base_url}{GRADIO}/config", headers=headers, timeout=10).json()
    for dependency in config["dependencies"]:
        if dependency.get("api_name") == api_name:
            return int(dependency["id"])
    raise LookupError(api_name)


def join(
    base_url: str, token: str, index: int, data: list[Any], timeout: float = 60
) -> list[dict[str, Any]]:
    """POST /gradio_api/queue/join for `index`, then read the session's event stream."""
    headers = {"Authorization": f"Bearer {token}"}
    session = uuid.uuid4().hex[:11]
    body = {"data": data, "fn_index": index, "session_hash": session, "event_data": None}
    with httpx.Client(base_url=base_url + GRADIO, headers=headers, timeout=timeout) as client:
        joined = client.post("/gradio_api/queue/join", json=body)
        joined.raise_for_status()
        messages: list[dict[str, Any]] = []
        with client.stream("GET", "/gradio_api/queue/data", params={"session_hash": session}) as r:
            for line in r.iter_lines():
                if not line.startswith("data:"):
                    continue
                message = json.loads(line.partition(":")[2])
                messages.append(message)
                if message.get("msg") in ("process_completed", "close_stream"):
                    break
    return messages
