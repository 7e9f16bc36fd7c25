"""A firing runs as its owner through the agent's chat entry: its answer lands in the
schedule's conversation; a tool that needs confirmation stops it at the card, which the owner
confirms later, once."""

from __future__ import annotations

import uuid

from tests.agent.support import Chat, error_code, kinds
from tests.schedules.support import create, finished, history, wait_runs

DEPLOY = {"dashboard_id": 42, "ref": "main", "environment": "staging"}


def _prompt(**more):
    return {"name": f"q-{uuid.uuid4().hex[:6]}", "cron": "0 7 * * *", **more}


def test_run_now_answers_in_the_schedules_conversation_as_its_owner(sapi, as_user, fake_llm):
    question = f"How many orders today? {uuid.uuid4().hex[:6]}"
    schedule = create(sapi, as_user["viewer"], **_prompt(prompt=question))
    fake_llm.enqueue({"text": "There were 42 orders today."})

    started = sapi.post(f"/api/schedules/{schedule['id']}/run", headers=as_user["viewer"])
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    [run] = wait_runs(sapi, as_user["viewer"], schedule["id"], finished())

    assert run["run_id"] == run_id and run["status"] == "ok", run
    assert run["finished_at"] and run["deliveries"] == [] and run["message_id"]
    rows = history(sapi, as_user["viewer"], schedule["conversation_id"])
    assert [r["role"] for r in rows] == ["user", "assistant"]
    assert rows[0]["content"] == question
    assert rows[1]["id"] == run["message_id"]
    assert "42 orders" in rows[1]["content"]
    # the same run engine as a person's turn: its model call is in the debug record
    debug = sapi.get(f"/api/debug/{run['message_id']}", headers=as_user["viewer"])
    assert debug.status_code == 200 and len(debug.json()["calls"]) == 1


def test_a_tool_needing_confirmation_stops_the_run_until_the_owner_confirms_once(
    sapi, as_user, tokens, fake_llm, agent_url
):
    schedule = create(sapi, as_user["admin"], **_prompt(prompt="Deploy 42 to staging"))
    fake_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": DEPLOY}]})

    sapi.post(f"/api/schedules/{schedule['id']}/run", headers=as_user["admin"])
    [run] = wait_runs(sapi, as_user["admin"], schedule["id"], finished())

    assert run["status"] == "waiting_confirmation", run
    cid = schedule["conversation_id"]
    card = [r for r in history(sapi, as_user["admin"], cid) if r["role"] == "assistant"][-1]
    chat = Chat(agent_url)
    fake_llm.enqueue({"text": "Deployed to staging."})
    call_id = card_call_id(card)
    confirmed = chat.decide(tokens["admin"], cid, "confirm", call_id)
    assert kinds(confirmed[-1])[:1] == ["tool_end"], confirmed[-1]
    again = chat.decide(tokens["admin"], cid, "confirm", call_id)
    assert error_code(again) == "NO_PENDING_CONFIRMATION"


def card_call_id(row):
    """The pending call's id on the stored turn (`metadata.parts`, as the browser reads it)."""
    [part] = [
        p for p in row["metadata"]["parts"] if p["metadata"].get("type") == "confirm_required"
    ]
    assert part["metadata"]["tool"] == "deploy_dashboard"
    return part["metadata"]["call_id"]


def test_a_workflow_firing_runs_the_named_yaml_workflow(sapi, as_user, fake_llm):
    schedule = create(
        sapi, as_user["viewer"], **_prompt(workflow="todays_errors", name="Evening errors")
    )
    fake_llm.enqueue({"text": "Two dashboards failed today."})

    sapi.post(f"/api/schedules/{schedule['id']}/run", headers=as_user["viewer"])
    [run] = wait_runs(sapi, as_user["viewer"], schedule["id"], finished())

    assert run["status"] == "ok", run
    executions = sapi.get(
        f"/api/workflow/conversations/{schedule['conversation_id']}/executions",
        headers=as_user["viewer"],
    ).json()["items"]
    assert [e["workflow_name"] for e in executions] == ["todays_errors"]
    assert (
        executions[0]["status"] == "completed" and executions[0]["message_id"] == run["message_id"]
    )
    metrics = sapi.get("/metrics").text
    assert 'schedule_firings_total{kind="workflow",status="ok"}' in metrics


def test_a_viewers_firing_has_a_viewers_rights(sapi, as_user, tokens, fake_llm, agent_url):
    """The firing acts with the owner's roles: what a viewer's schedule proposes to deploy is
    refused by the backend when the viewer confirms it."""
    schedule = create(sapi, as_user["viewer"], **_prompt(prompt="Deploy 42 to staging"))
    fake_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": DEPLOY}]})
    sapi.post(f"/api/schedules/{schedule['id']}/run", headers=as_user["viewer"])
    [run] = wait_runs(sapi, as_user["viewer"], schedule["id"], finished())
    cid = schedule["conversation_id"]
    card = [r for r in history(sapi, as_user["viewer"], cid) if r["role"] == "assistant"][-1]

    fake_llm.enqueue({"text": "Not allowed."})
    outputs = Chat(agent_url).decide(tokens["viewer"], cid, "confirm", card_call_id(card))

    assert run["status"] == "waiting_confirmation"
    [failed] = [m for m in outputs[-1] if m["metadata"].get("type") == "tool_error"]
    assert failed["metadata"]["error"]["code"] == "FORBIDDEN"


def test_a_read_only_access_token_cannot_create_or_run_schedules(sapi, as_user):
    token = sapi.post(
        "/api/auth/tokens", json={"name": "ro", "scope": "read"}, headers=as_user["editor"]
    ).json()["token"]
    read_only = {"Authorization": f"Bearer {token}"}
    refused = sapi.post(
        "/api/schedules", json=_prompt(prompt="How many orders?"), headers=read_only
    )
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "FORBIDDEN"
    assert sapi.get("/api/schedules", headers=read_only).status_code == 200
