"""Debug records over the real /chat route: every model call of a turn is recorded exactly as
the scripted LLM received it (messages, tools), with its answer and timing, without any
credential, under the assistant history row whose id every final message carries."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import pytest

from tests.agent._diagnosis import answer, call, diagnose, diagnosis_of, new_id
from tests.agent.support import Chat, history
from tests.conftest import AGENT_CLIENT_SECRET, TEST_JWT_SECRET, bearer

LLM_KEY = "fake-llm-key"  # tests/agent/conftest.py gives the agent this LLM_API_KEY
CSV_KEY = "exports/sales_2026_10.csv"


def answer_row(api: httpx.Client, token: str, cid: str) -> dict[str, Any]:
    """The conversation's last assistant history row."""
    return [m for m in history(api, token, cid) if m["role"] == "assistant"][-1]


def debug_record(api: httpx.Client, token: str, message_id: int) -> dict[str, Any]:
    response = api.get(f"/api/debug/{message_id}", headers=bearer(token))
    assert response.status_code == 200, response.text
    return dict(response.json())


def final_message_id(outputs: list[list[dict[str, Any]]], api, token, cid) -> int:
    """The id every message of the final value carries; it is the assistant row's id."""
    ids = {m["metadata"].get("message_id") for m in outputs[-1]}
    (message_id,) = ids
    assert message_id == answer_row(api, token, cid)["id"]
    return int(message_id)


CUT = re.compile(r"… \[cut: ([\d,]+) more characters\]$")


def same_or_cut(recorded: Any, sent: Any) -> bool:
    """Equal, except that a long string may be its start and the marker of what was cut."""
    if isinstance(recorded, str) and isinstance(sent, str) and (marker := CUT.search(recorded)):
        start = recorded[: marker.start()]
        return sent.startswith(start) and len(sent) - len(start) == int(
            marker.group(1).replace(",", "")
        )
    if isinstance(recorded, dict) and isinstance(sent, dict):
        return recorded.keys() == sent.keys() and all(
            same_or_cut(recorded[k], sent[k]) for k in recorded
        )
    if isinstance(recorded, list) and isinstance(sent, list):
        return len(recorded) == len(sent) and all(map(same_or_cut, recorded, sent))
    return bool(recorded == sent)


def assert_exactly_as_sent(recorded: dict[str, Any], sent: dict[str, Any]) -> None:
    request = recorded["request"]
    assert same_or_cut(request["messages"], sent["messages"]), request["messages"]
    assert request["tools"] == sent.get("tools", [])
    assert request["model"] == sent["model"]
    assert recorded["timing"]["duration_ms"] >= 0
    assert recorded["timing"]["start_time"] <= recorded["timing"]["end_time"]


def assert_no_credential(record: dict[str, Any], *tokens: str) -> None:
    text = json.dumps(record)
    for secret in (*tokens, LLM_KEY, TEST_JWT_SECRET, AGENT_CLIENT_SECRET):
        assert secret not in text
    assert "eyJ" not in text  # no JWT at all: the user's, the agent's service token


def test_each_call_of_a_tool_turn_is_recorded_exactly_as_the_llm_received_it(
    chat: Chat, tokens, conversation, fake_llm, api
):
    cid = conversation()
    fake_llm.enqueue(
        {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}]},
        {"text": "Dashboard 42 is the Sales overview.", "delay_ms": 2},
    )

    outputs = chat.send(tokens["admin"], cid, "Show dashboard 42")

    message_id = final_message_id(outputs, api, tokens["admin"], cid)
    record = debug_record(api, tokens["admin"], message_id)
    assert record["message_id"] == message_id and record["dropped_calls"] == 0
    first, second = record["calls"]
    sent = fake_llm.requests
    assert len(sent) == 2
    assert_exactly_as_sent(first, sent[0])
    assert_exactly_as_sent(second, sent[1])
    assert sent[0]["messages"][0]["role"] == "system"  # the system prompt is in the record
    assert "get_dashboard" in {t["function"]["name"] for t in first["request"]["tools"]}
    assert first["response"]["tool_calls"][0]["name"] == "get_dashboard"
    assert first["response"]["tool_calls"][0]["args"] == {"dashboard_id": 42}
    assert first["response"]["finish_reason"] == "tool_calls"
    assert second["response"]["content"] == "Dashboard 42 is the Sales overview."
    assert second["response"]["finish_reason"] == "stop"
    assert second["response"]["usage"]["total_tokens"] > 0
    assert first["request"]["params"]["stream"] is True
    assert_no_credential(record, tokens["admin"])


def test_no_credential_is_recorded_even_when_the_person_pastes_one(
    chat: Chat, tokens, conversation, fake_llm, api
):
    cid = conversation("viewer")
    token = tokens["viewer"]
    fake_llm.enqueue({"text": "Please do not share tokens."})
    pasted = f"my token is {token} and the key {LLM_KEY}; Authorization: Bearer {token}"

    outputs = chat.send(token, cid, pasted)

    sent = json.dumps(fake_llm.requests[0])
    assert token in sent  # the model was sent the text as typed ...
    assert fake_llm.script.recorded()[0]["headers"]["authorization"] == f"Bearer {LLM_KEY}"
    record = debug_record(api, token, final_message_id(outputs, api, token, cid))
    assert_no_credential(record, token)  # ... the record has it removed
    assert "[redacted]" in record["calls"][0]["request"]["messages"][-1]["content"]
    # What the person typed is in the thread as typed; archive it (its checkpoints go), so the
    # suite-wide check that no session JWT is in the checkpoint tables still holds.
    archive_when_idle(api, token, cid)


def archive_when_idle(api, token: str, cid: str) -> None:
    deadline = time.monotonic() + 15
    while True:
        response = api.delete(
            f"/api/assistant/conversations/{cid}", headers={"Authorization": f"Bearer {token}"}
        )
        if response.status_code != 409 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert response.status_code == 204, response.text


def test_mode_none_is_recorded_with_no_tools_offered(
    chat: Chat, tokens, conversation, fake_llm, api
):
    cid = conversation()
    fake_llm.enqueue({"text": "A dashboard is a set of charts."})

    outputs = chat.send(tokens["admin"], cid, "What is a dashboard?", options={"mode": "none"})

    (recorded,) = debug_record(
        api, tokens["admin"], final_message_id(outputs, api, tokens["admin"], cid)
    )["calls"]
    assert recorded["request"]["tools"] == []
    assert_exactly_as_sent(recorded, fake_llm.requests[0])
    assert recorded["response"]["content"] == "A dashboard is a set of charts."


def test_selected_resources_reach_the_recorded_request_and_a_traversal_key_does_not(
    chat: Chat, tokens, conversation, fake_llm, api
):
    cid = conversation("viewer")
    fake_llm.enqueue({"text": "October sales look steady."})
    resources = {"files": [CSV_KEY, "../x"], "tables": ["sample.orders"]}

    outputs = chat.send(
        tokens["viewer"], cid, "Compare the file with the table", options={"resources": resources}
    )

    record = debug_record(
        api, tokens["viewer"], final_message_id(outputs, api, tokens["viewer"], cid)
    )
    (recorded,) = record["calls"]
    assert_exactly_as_sent(recorded, fake_llm.requests[0])
    question = recorded["request"]["messages"][-1]["content"]
    assert f'<resource kind="file" ref="{CSV_KEY}">' in question
    assert "order_id,order_date,region,product,quantity,unit_price,amount" in question
    assert '<resource kind="table" ref="sample.orders">' in question
    assert "- customer_id INTEGER" in question
    assert 'ref="../x"' not in json.dumps(record)


def test_a_diagnosis_runs_calls_carry_its_run_id(chat: Chat, tokens, conversation, fake_llm, api):
    cid = conversation("viewer")
    logs = new_id("logs")
    fake_llm.enqueue(
        call("query_logs", {"dashboard_id": 17}, id=logs),
        answer(
            {
                "conclusion": None,
                "analysis": [],
                "action_plan": [],
                "recommendations": [],
                "limitations": {"checked_scope": [], "missing_info": ["everything"]},
            }
        ),
    )

    outputs = diagnose(chat, tokens["viewer"], cid, "Why is dashboard 17 failing?")

    run_id = diagnosis_of(outputs[-1])["run_id"]
    record = debug_record(
        api, tokens["viewer"], final_message_id(outputs, api, tokens["viewer"], cid)
    )
    assert [c["run_id"] for c in record["calls"]] == [run_id, run_id]
    assert CUT.search(record["calls"][1]["request"]["messages"][-1]["content"])  # 8,000 chars
    for recorded, sent in zip(record["calls"], fake_llm.requests, strict=True):
        assert_exactly_as_sent(recorded, sent)
    assert {t["function"]["name"] for t in record["calls"][0]["request"]["tools"]} == {
        "lookup_knowledge",
        "query_logs",
        "execute_sql",
    }
    assert_no_credential(record, tokens["viewer"])


def test_a_workflow_llm_call_step_is_recorded(chat: Chat, tokens, conversation, fake_llm, api):
    cid = conversation()
    fake_llm.enqueue({"text": "Quiet day.", "delay_ms": 2})

    outputs = chat.send(
        tokens["admin"], cid, "go", options={"mode": "yaml", "workflow": "todays_errors"}
    )

    record = debug_record(
        api, tokens["admin"], final_message_id(outputs, api, tokens["admin"], cid)
    )
    (recorded,) = record["calls"]
    assert recorded["source"] == "workflow:todays_errors:summary"
    assert_exactly_as_sent(recorded, fake_llm.requests[0])
    assert recorded["response"]["content"] == "Quiet day."


def test_a_turn_ending_in_a_confirmation_or_an_llm_error_carries_its_row_id(
    chat: Chat, tokens, conversation, fake_llm, api
):
    cid = conversation()
    deploy = {"dashboard_id": 42, "ref": "main", "environment": "staging"}
    fake_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": deploy}]})

    asked = chat.send(tokens["admin"], cid, "Deploy 42 to staging")

    assert asked[-1][-1]["metadata"]["type"] == "confirm_required"
    record = debug_record(api, tokens["admin"], final_message_id(asked, api, tokens["admin"], cid))
    assert record["calls"][0]["response"]["tool_calls"][0]["name"] == "deploy_dashboard"

    other = conversation()
    fake_llm.enqueue({"status": 500}, {"status": 500})
    failed = chat.send(tokens["admin"], other, "Hello")

    assert failed[-1][-1]["metadata"]["code"] == "LLM_ERROR"
    record = debug_record(
        api, tokens["admin"], final_message_id(failed, api, tokens["admin"], other)
    )
    assert [c["response"]["finish_reason"] for c in record["calls"]] == ["error", "error"]
    assert all(c["response"]["error"]["type"] for c in record["calls"])


@pytest.fixture(scope="module")
def demo_chat(start_agent) -> Any:
    with start_agent(LLM_API_BASE="") as (base, _proc):
        yield Chat(base)


def test_the_demo_models_calls_are_recorded_too(demo_chat: Chat, tokens, conversation, api):
    cid = conversation()

    outputs = demo_chat.send(tokens["admin"], cid, "dashboard 42")

    record = debug_record(
        api, tokens["admin"], final_message_id(outputs, api, tokens["admin"], cid)
    )
    first, second = record["calls"]
    assert first["request"]["messages"][-1] == {"role": "user", "content": "dashboard 42"}
    assert "get_dashboard" in {t["function"]["name"] for t in first["request"]["tools"]}
    assert first["response"]["tool_calls"][0]["name"] == "get_dashboard"
    assert second["request"]["messages"][-1]["role"] == "tool"
    assert second["response"]["content"]
    assert_no_credential(record, tokens["admin"])
