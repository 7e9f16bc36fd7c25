"""One turn through the agent's chat entry (the Gradio `/chat` endpoint a person's browser
uses), as the schedule's owner: the same run engine, roles, budget, usage, audit, debug record
and traces as a person's turn. The answer is read from the turn's final streamed value."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

GRADIO = "/api/agent/gradio"


@dataclass(frozen=True)
class TurnOutcome:
    """How the turn ended: `ok`, `waiting_confirmation` (it stopped at a confirmation card) or
    `failed` (with the stream's error), the answer row's id and the messages it streamed."""

    status: str
    message_id: int | None
    messages: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, str] | None = None

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if (m.get("metadata") or {}).get("type") == kind]

    @property
    def text(self) -> str:
        plain = [m for m in self.messages if not (m.get("metadata") or {}).get("type")]
        return "\n\n".join(str(m.get("content") or "") for m in plain).strip()


class AgentUnavailable(Exception):
    """The agent could not be reached or did not answer the turn."""


def _last_value(body: str) -> list[dict[str, Any]]:
    """The last streamed value of Gradio's SSE answer (`event: generating|complete`)."""
    event, last = "message", None
    for line in body.splitlines():
        if line.startswith("event:"):
            event = line.partition(":")[2].strip()
        elif line.startswith("data:") and event in ("generating", "complete"):
            payload = json.loads(line.partition(":")[2].strip() or "null")
            if payload:
                last = payload[0]
        elif line.startswith("data:") and event == "error":
            raise AgentUnavailable("the agent's chat endpoint answered an error event")
    return list(last or [])


def outcome(messages: list[dict[str, Any]]) -> TurnOutcome:
    """Read the turn's ending from its final value."""
    message_id = next(
        (
            m["metadata"]["message_id"]
            for m in messages
            if (m.get("metadata") or {}).get("message_id")
        ),
        None,
    )
    kinds = [(m.get("metadata") or {}).get("type") for m in messages]
    if "confirm_required" in kinds:
        return TurnOutcome("waiting_confirmation", message_id, messages)
    errors = [m["metadata"] for m in messages if (m.get("metadata") or {}).get("type") == "error"]
    if errors:
        error = {"code": str(errors[-1].get("code")), "message": str(errors[-1].get("message"))}
        return TurnOutcome("failed", message_id, messages, error)
    return TurnOutcome("ok", message_id, messages)


async def run_turn(
    *,
    agent_url: str,
    token: str,
    conversation_id: str,
    text: str,
    options: dict[str, Any],
    timeout_s: float,
) -> TurnOutcome:
    """Send `text` to the conversation as its owner (`token`) and wait for the turn's end."""
    data = [{"text": text, "files": []}, conversation_id, "", "", json.dumps(options)]
    headers = {"Authorization": f"Bearer {token}"}
    timeout = httpx.Timeout(timeout_s, connect=10.0)
    try:
        async with httpx.AsyncClient(
            base_url=agent_url.rstrip("/") + GRADIO, headers=headers, timeout=timeout
        ) as client:
            started = await client.post("/gradio_api/call/chat", json={"data": data})
            started.raise_for_status()
            event_id = started.json()["event_id"]
            stream = await client.get(f"/gradio_api/call/chat/{event_id}")
            stream.raise_for_status()
    except (httpx.HTTPError, KeyError, ValueError) as exc:
        raise AgentUnavailable(type(exc).__name__) from exc
    return outcome(_last_value(stream.text))
