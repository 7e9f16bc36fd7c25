"""Workflow executions over raw HTTP: the agent records them with dual identity, the owner reads
them, nobody else sees them (404), status changes are atomic, and every write is audited."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import AGENT_CLIENT_SECRET, bearer

BASE = "/api/workflow"


@pytest.fixture()
def as_agent(api: httpx.Client, tokens: dict[str, str]) -> dict[str, dict[str, str]]:
    """Dual-identity headers with a fresh service token (the session's one lives 5 minutes,
    less than a whole suite run takes before these tests)."""
    issued = api.post(
        "/api/auth/service-token",
        json={"client_id": "agent-chat", "client_secret": AGENT_CLIENT_SECRET},
    )
    assert issued.status_code == 200, issued.text
    service = str(issued.json()["access_token"])
    return {name: {**bearer(service), "X-On-Behalf-Of": token} for name, token in tokens.items()}


def conversation(api: httpx.Client, headers: dict[str, str]) -> str:
    created = api.post("/api/assistant/conversations", json={}, headers=headers)
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def start(api: httpx.Client, agent: dict[str, str], cid: str, name: str = "explore_table") -> Any:
    body = {
        "conversation_id": cid,
        "workflow_name": name,
        "input": {"text": "describe sample.orders"},
    }
    return api.post(f"{BASE}/executions", json=body, headers=agent)


def test_the_agent_records_an_execution_and_its_steps_and_the_owner_reads_them(
    api, as_user, as_agent, sql
):
    cid = conversation(api, as_user["editor"])
    created = start(api, as_agent["editor"], cid)
    assert created.status_code == 201, created.text
    execution = created.json()
    assert (execution["status"], execution["mode"], execution["steps"]) == ("running", "yaml", [])
    step = {
        "step_type": "tool_call",
        "step_name": "schema",
        "status": "running",
        "input": {"table_ref": "sample.orders"},
    }
    path = f"{BASE}/executions/{execution['id']}"
    assert api.put(f"{path}/steps/0", json=step, headers=as_agent["editor"]).status_code == 200
    done = {
        **step,
        "status": "completed",
        "output": {"items": [1]},
        "finished_at": "2026-12-01T08:00:00Z",
    }
    assert api.put(f"{path}/steps/0", json=done, headers=as_agent["editor"]).status_code == 200
    message = api.post(
        f"/api/assistant/conversations/{cid}/messages",
        json={"role": "assistant", "content": "Orders."},
        headers=as_agent["editor"],
    ).json()
    finished = api.patch(
        path,
        json={"status": "completed", "final_answer": "Orders.", "message_id": message["id"]},
        headers=as_agent["editor"],
    )
    assert finished.status_code == 200, finished.text

    read = api.get(path, headers=as_user["editor"]).json()
    assert (
        read["status"] == "completed"
        and read["finished_at"]
        and read["message_id"] == message["id"]
    )
    assert [(s["step_name"], s["status"], s["output"]) for s in read["steps"]] == [
        ("schema", "completed", {"items": [1]})
    ]
    audited = sql.execute(
        "select action, service_client_id from assistant_audit"
        " where resource_type = 'workflow_execution' and resource_id = %s order by id",
        (str(execution["id"]),),
    ).fetchall()
    assert audited == [
        ("workflow.execution_start", "agent-chat"),
        ("workflow.step_completed", "agent-chat"),
        ("workflow.execution_completed", "agent-chat"),
    ]
    again = api.put(f"{path}/steps/1", json=step, headers=as_agent["editor"])
    assert again.status_code == 409 and again.json()["error"]["code"] == "EXECUTION_CONFLICT"


def test_someone_elses_execution_and_conversation_are_404_on_every_route(api, as_user, as_agent):
    cid = conversation(api, as_user["editor"])
    execution = start(api, as_agent["editor"], cid).json()
    path = f"{BASE}/executions/{execution['id']}"
    step = {"step_type": "llm_call", "step_name": "x", "status": "running"}
    for response in (
        api.get(path, headers=as_user["viewer"]),
        api.get(f"{BASE}/conversations/{cid}/executions", headers=as_user["viewer"]),
        api.patch(path, json={"status": "failed"}, headers=as_agent["viewer"]),
        api.put(f"{path}/steps/0", json=step, headers=as_agent["viewer"]),
        start(api, as_agent["viewer"], cid),
        api.post(
            f"{BASE}/conversations/{cid}/executions/cancel-waiting", headers=as_agent["viewer"]
        ),
        api.get(f"{BASE}/executions/999999999", headers=as_user["editor"]),
    ):
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "NOT_FOUND"
    assert api.get(path, headers=as_user["editor"]).json()["status"] == "running"


def test_the_write_routes_refuse_a_plain_user_token(api, as_user):
    cid = conversation(api, as_user["admin"])
    refused = start(api, as_user["admin"], cid)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "FORBIDDEN"


def test_bad_writes_are_clear_errors(api, as_user, as_agent):
    cid = conversation(api, as_user["admin"])
    unknown = start(api, as_agent["admin"], cid, name="rm_rf")
    assert unknown.status_code == 422 and unknown.json()["error"]["code"] == "UNKNOWN_WORKFLOW"
    execution = start(api, as_agent["admin"], cid).json()
    other = conversation(api, as_user["admin"])
    foreign = api.post(
        f"/api/assistant/conversations/{other}/messages",
        json={"role": "assistant", "content": "elsewhere"},
        headers=as_agent["admin"],
    ).json()
    path = f"{BASE}/executions/{execution['id']}"
    linked = api.patch(
        path, json={"status": "completed", "message_id": foreign["id"]}, headers=as_agent["admin"]
    )
    assert linked.status_code == 422 and "message_id" in linked.json()["error"]["message"]
    huge = api.put(
        f"{path}/steps/0",
        json={
            "step_type": "tool_call",
            "step_name": "s",
            "status": "completed",
            "output": "x" * 300_000,
        },
        headers=as_agent["admin"],
    )
    assert huge.status_code == 422
    bad_status = api.patch(path, json={"status": "exploded"}, headers=as_agent["admin"])
    assert bad_status.status_code == 422


def test_a_waiting_execution_is_claimed_once_and_cancelled_by_a_new_message(api, as_user, as_agent):
    cid = conversation(api, as_user["admin"])
    execution = start(api, as_agent["admin"], cid).json()
    path = f"{BASE}/executions/{execution['id']}"
    pending = {"tool": "deploy_dashboard", "call_id": "call_wf_1", "args": {}, "step_index": 2}
    assert (
        api.patch(
            path, json={"status": "waiting", "pending": pending}, headers=as_agent["admin"]
        ).status_code
        == 200
    )
    waiting = api.get(
        f"{BASE}/conversations/{cid}/executions",
        params={"status": "waiting"},
        headers=as_user["admin"],
    )
    assert [e["pending"]["call_id"] for e in waiting.json()["items"]] == ["call_wf_1"]

    claim = {"status": "running", "expected_status": "waiting"}
    first = api.patch(path, json=claim, headers=as_agent["admin"])
    second = api.patch(path, json=claim, headers=as_agent["admin"])
    assert first.status_code == 200 and first.json()["pending"] is None
    assert second.status_code == 409 and second.json()["error"]["details"]["status"] == "running"

    api.patch(path, json={"status": "waiting", "pending": pending}, headers=as_agent["admin"])
    cancelled = api.post(
        f"{BASE}/conversations/{cid}/executions/cancel-waiting", headers=as_agent["admin"]
    )
    assert [e["status"] for e in cancelled.json()["items"]] == ["cancelled"]
    assert cancelled.json()["items"][0]["error"]["code"] == "SUPERSEDED"
    none_left = api.post(
        f"{BASE}/conversations/{cid}/executions/cancel-waiting", headers=as_agent["admin"]
    )
    assert none_left.json()["items"] == []
