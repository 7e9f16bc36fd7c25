"""The diagnosis evidence tools' envelopes (agent/diagnosis/envelope.py) over a fake backend:
the model's `{previous_observation?, input}` is unwrapped, only `input` reaches the backend, and
the answer comes back as a whitelisted observation with its evidence status. No processes."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from langchain_core.messages import ToolMessage
from pydantic import ValidationError

from agent.backend_client import BackendClient
from agent.context import Context
from agent.diagnosis.envelope import (
    ENVELOPES,
    business_input,
    evidence_tools,
    unknown_keys,
)
from agent.tools.names import DIAGNOSIS_TOOLS
from tests.agent._tools_fixtures import runtime
from tests.agent.unit.scripted import FakeBackend

CONTEXT = Context(
    user_token="user-jwt", user_id="1", username="admin", roles=("admin",), conversation_id="c"
)
PREVIOUS = {"tool_call_id": "call_0", "assessment": "GAINED"}


def tools(answers: dict[str, Any]) -> tuple[dict[str, Any], FakeBackend]:
    backend = FakeBackend(answers)
    built = evidence_tools(cast(BackendClient, backend))
    return {t.name: t for t in built}, backend


async def call(tool: Any, args: dict[str, Any]) -> ToolMessage:
    message = await tool.ainvoke(
        {
            "type": "tool_call",
            "name": tool.name,
            "args": {**args, "runtime": runtime(CONTEXT)},
            "id": "call_1",
        }
    )
    assert isinstance(message, ToolMessage)
    return message


def test_the_three_tools_take_an_envelope_and_nothing_else_is_an_envelope_key():
    built, _ = tools({})
    assert tuple(built) == DIAGNOSIS_TOOLS
    assert unknown_keys({"input": {}, "previous_observation": PREVIOUS}) == []
    assert unknown_keys({"input": {}, "query": "x", "notes": 1}) == ["notes", "query"]


def test_an_envelope_needs_its_typed_input_and_a_well_formed_previous_observation():
    envelope = ENVELOPES["lookup_knowledge"].model_validate(
        {"input": {"query": "stale data"}, "previous_observation": PREVIOUS}
    )
    assert business_input(envelope).model_dump() == {"query": "stale data"}
    assert envelope.previous_observation is not None
    assert envelope.previous_observation.assessment == "GAINED"

    with pytest.raises(ValidationError):
        ENVELOPES["lookup_knowledge"].model_validate({"query": "not wrapped"})
    with pytest.raises(ValidationError):
        ENVELOPES["lookup_knowledge"].model_validate(
            {"input": {"query": "x"}, "previous_observation": {"tool_call_id": "c"}}
        )


async def test_only_the_input_reaches_the_backend_and_the_answer_is_projected():
    article = {
        "id": 5,
        "slug": "s",
        "title": "Stale data",
        "lang": "en",
        "snippet": "Do X",
        "body": "the whole article",
        "author_email": "a@example.com",
    }
    built, backend = tools({"/api/knowledge/search": {"items": [article]}})

    message = await call(
        built["lookup_knowledge"], {"input": {"query": "stale"}, "previous_observation": PREVIOUS}
    )

    ((method, path, kwargs),) = backend.calls
    assert (method, path) == ("GET", "/api/knowledge/search")
    assert kwargs["params"]["q"] == "stale"
    observation = json.loads(str(message.content))
    assert observation == {
        "tool_call_id": "call_1",
        "evidence_status": "OK",
        "articles": [
            {"id": 5, "slug": "s", "title": "Stale data", "lang": "en", "snippet": "Do X"}
        ],
    }
    assert message.artifact == {"evidence_status": "OK"}


async def test_an_answer_without_evidence_is_empty():
    built, backend = tools({"/api/logs": {"items": [], "total": 0}})

    message = await call(built["query_logs"], {"input": {"query": "nothing", "level": "error"}})

    (_method, _path, kwargs) = backend.calls[0]
    assert kwargs["params"]["query"] == "nothing" and kwargs["params"]["level"] == "error"
    observation = json.loads(str(message.content))
    assert observation["evidence_status"] == "EMPTY" and observation["entries"] == []
    assert observation["matched"] == 0
