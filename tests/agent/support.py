"""Driving the agent's `/chat` endpoint with gradio_client, and reading what it streamed."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from gradio_client import Client
from gradio_client.client import Job
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from agent.config import Settings as AgentSettings
from agent.graph import build_agent, build_model

GRADIO = "/api/agent/gradio"
Messages = list[dict[str, Any]]


class Chat:
    """One gradio_client per user token against one agent process."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self._clients: dict[str, Client] = {}

    def client(self, token: str) -> Client:
        if token not in self._clients:
            self._clients[token] = Client(
                self.base_url + GRADIO,
                headers={"Authorization": f"Bearer {token}"},
                verbose=False,
                download_files=False,
            )
        return self._clients[token]

    def submit(
        self,
        token: str,
        conversation_id: str,
        text: str = "",
        *,
        action: str = "",
        focus: str = "",
        options: dict[str, Any] | str | None = None,
    ) -> Job:
        return self.client(token).submit(
            message={"text": text, "files": []},
            conversation_id=conversation_id,
            action=action,
            focus=focus,
            options=options if isinstance(options, str) else json.dumps(options or {}),
            api_name="/chat",
        )

    def send(
        self,
        token: str,
        conversation_id: str,
        text: str = "",
        *,
        action: str = "",
        focus: str = "",
        options: dict[str, Any] | str | None = None,
    ) -> list[Messages]:
        """Every streamed value of one submit, in order (each is the turn's message list)."""
        job = self.submit(token, conversation_id, text, action=action, focus=focus, options=options)
        return collect(job)

    def decide(
        self, token: str, conversation_id: str, action: str, call_id: str | None
    ) -> list[Messages]:
        """Answer the pending confirmation shown on the card of `call_id`."""
        options = {"call_id": call_id} if call_id else {}
        return self.send(token, conversation_id, action=action, options=options)


def collect(job: Job, timeout: float = 60) -> list[Messages]:
    """Wait for the stream to end; its values, or the client's error (e.g. a refused upload)."""
    deadline = time.monotonic() + timeout
    while not job.done():
        if time.monotonic() > deadline:
            raise TimeoutError("the agent did not finish the stream")
        time.sleep(0.02)
    if (error := job.exception()) is not None:
        raise error
    return [_messages(out) for out in job.outputs()]


def wait_for(job: Job, predicate: Any, timeout: float = 20) -> Messages:
    """Block until a streamed value satisfies `predicate`; return it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        outputs = job.outputs()
        if outputs and predicate(_messages(outputs[-1])):
            return _messages(outputs[-1])
        if job.done():
            break
        time.sleep(0.01)
    raise AssertionError(f"no streamed value matched; last: {job.outputs()[-1:]}")


def _messages(output: Any) -> Messages:
    if isinstance(output, tuple | list) and output and isinstance(output[0], list | type(None)):
        output = output[0]
    return list(output or [])


def kinds(messages: Messages) -> list[str]:
    """metadata.type of each message ('text' for plain answers)."""
    return [m["metadata"].get("type", "text") for m in messages]


def of_type(messages: Messages, kind: str) -> list[dict[str, Any]]:
    return [m for m in messages if m["metadata"].get("type", "text") == kind]


def confirm_id(outputs: list[Messages]) -> str:
    """The call id on the confirmation card of a finished stream."""
    (card,) = of_type(outputs[-1], "confirm_required")
    return str(card["metadata"]["call_id"])


def text_of(messages: Messages) -> str:
    return "".join(m["content"] for m in messages if "type" not in m["metadata"])


def error_code(outputs: list[Messages]) -> str | None:
    errors = of_type(outputs[-1], "error") if outputs else []
    return errors[0]["metadata"]["code"] if errors else None


def history(api: Any, token: str, conversation_id: str) -> list[dict[str, Any]]:
    """The conversation's persisted messages, oldest first."""
    response = api.get(
        f"/api/assistant/conversations/{conversation_id}/history",
        params={"limit": 200},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def assert_valid_for_any_provider(request: dict[str, Any]) -> None:
    """Every assistant tool call in an LLM request is answered by a tool message right after."""
    messages = request["messages"]
    for i, message in enumerate(messages):
        calls = message.get("tool_calls") or []
        if message["role"] != "assistant" or not calls:
            continue
        following = []
        for later in messages[i + 1 :]:
            if later["role"] != "tool":
                break
            following.append(later["tool_call_id"])
        assert sorted(following) == sorted(c["id"] for c in calls), messages


def thread_messages(database_url: str, thread_id: str) -> list[BaseMessage]:
    """The conversation's LangGraph thread as the agent reads it from its checkpointer (latest
    checkpoint; the messages are rebuilt from their snapshot and deltas,
    agent/perf/delta_state.py)."""

    async def read() -> list[BaseMessage]:
        settings = AgentSettings()
        async with AsyncPostgresSaver.from_conn_string(database_url) as saver:
            graph = build_agent(settings, model=build_model(settings), tools=[], checkpointer=saver)
            snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
        return list(snapshot.values.get("messages", []))

    return asyncio.run(read())


def assert_every_tool_call_answered(messages: list[BaseMessage]) -> None:
    """No AI tool call of the thread is left without its ToolMessage."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    calls = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    missing = [c for c in calls if c not in answered]
    assert not missing, f"tool calls without a result: {missing}"


def _calls(message: BaseMessage) -> list[Any]:
    return list(message.tool_calls) if isinstance(message, AIMessage) else []


def wait_checkpointed_call(
    database_url: str, thread_id: str, tool: str, timeout: float = 20
) -> None:
    """Block until the thread's checkpoint holds a model turn calling `tool` (the run stores
    each step before the next starts, so the call is then durable before the tool runs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        messages = thread_messages(database_url, thread_id)
        if any(
            isinstance(m, AIMessage) and tool in {c["name"] for c in m.tool_calls} for m in messages
        ):
            return
        time.sleep(0.05)
    raise AssertionError(f"no checkpoint of the {tool} call in {timeout}s")
