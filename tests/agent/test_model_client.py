"""The agent's model client (agent/graph.py `build_model`) keeps each streamed chunk as the
provider's JSON instead of building the SDK's chunk models, over the SDK's aiohttp transport:
what ChatOpenAI makes of a stream must be exactly what it makes with the SDK's own client, for
text, tool calls split across chunks, usage, a stream that breaks, a model that cannot be
reached and one that stops answering (with no per-chunk timer of its own, the transport's read
timeout ends a stalled stream)."""

from __future__ import annotations

import contextlib
import socket
from typing import Any

import openai
import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_openai import ChatOpenAI
from openai.types.chat import ChatCompletion
from pydantic import SecretStr

from agent.config import Settings
from agent.graph import build_model
from agent.middleware import llm_failure
from agent.perf.openai_stream import ChunkDicts, PlainCompletions
from tests.fakes.llm_server import FakeLLM

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_dashboard",
            "description": "One dashboard",
            "parameters": {
                "type": "object",
                "properties": {"dashboard_id": {"type": "integer"}},
                "required": ["dashboard_id"],
            },
        },
    }
]


def _sdk_model(settings: Settings) -> ChatOpenAI:
    """ChatOpenAI as the library builds it, with the SDK's chunk models."""
    return ChatOpenAI(
        base_url=settings.llm_api_base,
        api_key=SecretStr("not-needed"),
        model=settings.model_name,
        streaming=True,
        stream_usage=True,
        timeout=settings.llm.request_timeout_s,
        max_retries=0,
        # its own connections: the library's shared default client outlives each test's loop
        http_async_client=openai.DefaultAsyncHttpxClient(),
    )


async def _close(*models: Any) -> None:
    for model in models:
        await model.root_async_client.close()
        if model.http_async_client is not None:  # given, so not the SDK client's to close
            await model.http_async_client.aclose()


async def _stream(model: Any, response: dict[str, Any], fake_llm: FakeLLM) -> dict[str, Any]:
    fake_llm.enqueue(response)
    chunks: list[AIMessageChunk] = []
    stream = model.bind_tools(TOOLS).astream([HumanMessage("check dashboard 42")])
    async with contextlib.aclosing(stream):
        async for chunk in stream:
            chunks.append(chunk)
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole += chunk
    return {
        "pieces": [c.content for c in chunks],
        "content": whole.content,
        "tool_calls": [(c["name"], c["args"]) for c in whole.tool_calls],
        "usage": whole.usage_metadata,
        "finish": whole.response_metadata.get("finish_reason"),
    }


@pytest.mark.parametrize(
    "response",
    [
        {"text": "Dashboard 42 has two failing charts."},
        {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}]},
        {
            "text": "Looking.",
            "tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 7}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 9},
        },
    ],
    ids=["text", "tool-call", "text-tool-call-usage"],
)
async def test_the_agents_client_streams_what_the_sdks_own_client_streams(
    fake_llm: FakeLLM, response: dict[str, Any]
) -> None:
    settings = Settings(llm_api_base=fake_llm.url)
    ours, sdk = build_model(settings), _sdk_model(settings)
    assert isinstance(ours, ChatOpenAI)
    assert isinstance(ours.root_async_client, ChunkDicts)
    try:
        got = await _stream(ours, response, fake_llm)
        expected = await _stream(sdk, response, fake_llm)
    finally:
        await _close(ours, sdk)
    assert got == expected
    streamed = bool(got["content"] or got["tool_calls"])
    assert streamed  # the script streamed something


async def test_the_chunks_reach_chatopenai_as_the_providers_json(fake_llm: FakeLLM) -> None:
    client = ChunkDicts(api_key="not-needed", base_url=fake_llm.url, max_retries=0)
    fake_llm.enqueue({"text": "one two three"})
    try:
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        got = [chunk async for chunk in stream]
    finally:
        await client.close()
    assert got
    assert all(isinstance(c, dict) for c in got)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in got if c["choices"])
    assert text.split() == ["one", "two", "three"]


async def test_a_stream_cut_mid_answer_fails_as_with_the_sdks_client(fake_llm: FakeLLM) -> None:
    settings = Settings(llm_api_base=fake_llm.url)
    errors = []
    models = (build_model(settings), _sdk_model(settings))
    try:
        for model in models:
            with pytest.raises(Exception) as raised:
                await _stream(model, {"drop_after_tokens": 2, "text": "a b c d e"}, fake_llm)
            errors.append(type(raised.value))
    finally:
        await _close(*models)
    assert errors[0] is errors[1]


async def _failure(model: Any) -> str:
    """How the agent describes the model call's failure (agent/middleware.py)."""
    with pytest.raises(openai.APIError) as raised:
        await model.ainvoke([HumanMessage("check dashboard 42")])
    return llm_failure(raised.value).message


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_model_that_cannot_be_reached_is_described_as_with_the_sdks_client() -> None:
    # aiohttp's adapter reports a refused connection as a connect timeout; people must not
    # be told the model was slow when it is not there at all
    settings = Settings(llm_api_base=f"http://127.0.0.1:{_closed_port()}/v1")
    ours, sdk = build_model(settings), _sdk_model(settings)
    try:
        described = [await _failure(ours), await _failure(sdk)]
    finally:
        await _close(ours, sdk)
    assert described == ["The language model could not be reached."] * 2


@pytest.mark.parametrize(
    "response",
    [{"hang_s": 5}, {"hang_after_tokens": 2, "text": "a b c d e"}],
    ids=["no-answer", "stalls-mid-stream"],
)
async def test_a_model_that_stops_answering_times_out_as_with_the_sdks_client(
    fake_llm: FakeLLM, response: dict[str, Any]
) -> None:
    settings = Settings(llm_api_base=fake_llm.url, llm={"request_timeout_s": 0.5})
    ours, sdk = build_model(settings), _sdk_model(settings)
    described = []
    try:
        for model in (ours, sdk):
            fake_llm.enqueue(response)
            described.append(await _failure(model))
    finally:
        await _close(ours, sdk)
    assert described == ["The language model did not answer in time."] * 2


HISTORY = [
    SystemMessage("You help with dashboards."),
    HumanMessage("check dashboard 42"),
    AIMessage(
        "",
        tool_calls=[{"name": "get_dashboard", "args": {"dashboard_id": 42}, "id": "call_1"}],
    ),
    ToolMessage('{"id": 42, "name": "Revenue"}', tool_call_id="call_1"),
    HumanMessage([{"type": "text", "text": "and the charts?"}]),
]


def _sent(fake_llm: FakeLLM) -> dict[str, Any]:
    """The last request as the provider received it: its JSON body and the headers that do
    not vary between two clients of the same SDK."""
    last = fake_llm.script.recorded()[-1]
    headers = {k: v for k, v in last["headers"].items() if k not in {"host"}}
    return {"body": last["body"], "headers": headers}


async def test_the_agents_client_sends_what_the_sdks_own_client_sends(
    fake_llm: FakeLLM,
) -> None:
    settings = Settings(llm_api_base=fake_llm.url)
    ours, sdk = build_model(settings), _sdk_model(settings)
    assert isinstance(ours, ChatOpenAI)
    assert isinstance(ours.async_client, PlainCompletions)
    sent = []
    try:
        for model in (ours, sdk):
            fake_llm.enqueue({"text": "Two charts."})
            bound = model.bind_tools(TOOLS, tool_choice="auto").bind(temperature=0.2, stop=["##"])
            stream = bound.astream(HISTORY)
            async with contextlib.aclosing(stream):
                async for _ in stream:
                    pass
            sent.append(_sent(fake_llm))
    finally:
        await _close(ours, sdk)
    ours_sent, sdk_sent = sent
    assert ours_sent["body"]["model"] == settings.model_name  # the same model setting
    ours_sent["body"]["model"] = sdk_sent["body"]["model"]
    assert ours_sent == sdk_sent
    assert ours_sent["body"]["messages"][2]["tool_calls"][0]["id"] == "call_1"
    assert ours_sent["body"]["stream_options"] == {"include_usage": True}


async def test_a_body_that_is_not_plain_json_takes_the_sdks_own_path(fake_llm: FakeLLM) -> None:
    """The SDK turns an iterable into a list before it sends it: such a body is its own."""
    client = ChunkDicts(api_key="not-needed", base_url=fake_llm.url, max_retries=0)
    completions = PlainCompletions(client)
    question = {"role": "user", "content": "hi"}
    try:
        fake_llm.enqueue({"text": "one two"})
        stream = await completions.create(model="m", messages=(m for m in [question]), stream=True)
        streamed = [chunk async for chunk in stream]
        fake_llm.enqueue({"text": "three"})
        whole = await completions.create(model="m", messages=[question])  # not streamed
    finally:
        await client.close()
    assert fake_llm.requests[0]["messages"] == [question]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in streamed if c["choices"])
    assert isinstance(whole, ChatCompletion)
    assert whole.choices[0].message.content == "three"
