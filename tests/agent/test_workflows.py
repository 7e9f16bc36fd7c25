"""Mode `yaml`: each shipped workflow end to end against the scripted LLM and the real backend
(execution and steps in Postgres, `workflow_step` messages in the stream, the answer in the
thread for the next agent turn), matching in Russian and English, the fallback to the agent,
and a step that needs confirmation pausing and resuming like the agent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agent.support import (
    confirm_id,
    error_code,
    history,
    kinds,
    of_type,
    text_of,
)
from tests.conftest import bearer


def steps_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["metadata"] for m in of_type(messages, "workflow_step")]


def execution_rows(sql: Any, cid: str) -> list[tuple[Any, ...]]:
    return sql.execute(
        "select id, workflow_name, status, final_answer is not null, message_id"
        " from workflow_executions where conversation_id = %s order by id",
        (cid,),
    ).fetchall()


def step_rows(sql: Any, execution_id: int) -> list[tuple[Any, ...]]:
    return sql.execute(
        "select step_index, step_name, step_type, status, output is not null, error"
        " from workflow_steps where execution_id = %s order by step_index",
        (execution_id,),
    ).fetchall()


SHIPPED = [
    # (workflow, message, steps, the llm_call step's scripted answer)
    (
        "explore_table",
        "Describe table sample.orders please",
        [("schema", "tool_call"), ("sample", "tool_call"), ("summary", "llm_call")],
        "Orders of customers; id is the key.",
    ),
    (
        "dashboard_predeploy_check",
        "Is dashboard 42 ready to deploy?",
        [
            ("dashboard", "tool_call"),
            ("health", "tool_call"),
            ("logs", "tool_call"),
            ("verdict", "llm_call"),
        ],
        "GO: validation is ok.",
    ),
    (
        "todays_errors",
        "Сводка ошибок за сегодня, пожалуйста",
        [("errors", "tool_call"), ("failing", "tool_call"), ("summary", "llm_call")],
        "Сегодня ошибок мало.",
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "steps", "llm_answer"), SHIPPED, ids=[s[0] for s in SHIPPED]
)
def test_a_shipped_workflow_runs_end_to_end_with_its_execution_and_steps_stored(
    chat, tokens, conversation, fake_llm, sql, api, name, text, steps, llm_answer
):
    cid = conversation()
    fake_llm.enqueue({"text": llm_answer, "delay_ms": 5})

    outputs = chat.send(tokens["admin"], cid, text, options={"mode": "yaml"})

    final = outputs[-1]
    shown = steps_of(final)
    assert [(s["name"], s["step_type"]) for s in shown] == steps
    assert {s["status"] for s in shown} == {"completed"}, shown
    assert all(s["workflow"] == name and isinstance(s["duration_ms"], int) for s in shown)
    running = [s for out in outputs for s in steps_of(out) if s["status"] == "running"]
    assert running  # each step was shown running before it completed
    answer = text_of(final)
    assert llm_answer in answer
    assert kinds(final)[-1] == "text"
    # the llm_call step streamed the scripted answer and saw the tool results
    (request,) = fake_llm.requests
    assert "tools" not in request
    [(execution_id, workflow, status, has_answer, message_id)] = execution_rows(sql, cid)
    assert (workflow, status, has_answer) == (name, "completed", True)
    rows = step_rows(sql, execution_id)
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [(n, t, "completed", True) for n, t in steps]
    assistant = [m for m in history(api, tokens["admin"], cid) if m["role"] == "assistant"]
    assert message_id == assistant[-1]["id"] and assistant[-1]["content"] == answer
    body = api.get(
        f"/api/workflow/executions/{execution_id}", headers=bearer(tokens["admin"])
    ).json()
    assert body["final_answer"] == answer and [s["step_name"] for s in body["steps"]] == [
        n for n, _ in steps
    ]


def test_explore_table_uses_the_table_selected_in_the_panel_and_its_rows(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation()
    fake_llm.enqueue({"text": "Customers by segment."})

    outputs = chat.send(
        tokens["admin"],
        cid,
        "Исследуй таблицу",
        options={"mode": "yaml", "resources": {"tables": ["sample.customers"]}},
    )

    schema, sample, _summary = steps_of(outputs[-1])
    assert schema["input"] == {"table_ref": "sample.customers"}
    assert sample["input"]["query"] == "SELECT * FROM customers LIMIT 5"
    assert len(sample["output"]["rows"]) == 5
    assert "**Таблица sample.customers**" in text_of(outputs[-1])
    prompt = fake_llm.requests[0]["messages"][-1]["content"]
    assert '"segment"' in prompt and "Answer in Russian" in prompt
    assert '<resource kind="table" ref="sample.customers">' in prompt


def test_the_workflow_answer_is_in_the_thread_for_the_next_agent_turn(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()
    fake_llm.enqueue({"text": "GO: all charts pass."}, {"text": "You asked about dashboard 42."})
    chat.send(tokens["admin"], cid, "Check dashboard 42 before deploy", options={"mode": "yaml"})

    chat.send(tokens["admin"], cid, "What did the check say?")

    messages = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert (
        "Pre-deploy check: #42" in messages[2]["content"]
        and "GO: all charts pass." in messages[2]["content"]
    )
    assert "tools" in fake_llm.requests[-1]  # the agent's turn offers its tools again


def test_a_named_workflow_runs_whatever_the_text_and_an_unknown_name_is_invalid_input(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation()
    fake_llm.enqueue({"text": "Quiet day."})

    outputs = chat.send(
        tokens["admin"], cid, "go", options={"mode": "yaml", "workflow": "todays_errors"}
    )
    assert [s["name"] for s in steps_of(outputs[-1])] == ["errors", "failing", "summary"]

    refused = chat.send(tokens["admin"], cid, "go", options={"mode": "yaml", "workflow": "nope"})
    assert error_code(refused) == "INVALID_INPUT" and "nope" in refused[-1][0]["content"]
    assert len(execution_rows(sql, cid)) == 1 and len(fake_llm.requests) == 1


def test_no_matching_workflow_is_a_notice_and_the_agents_answer(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation()
    fake_llm.enqueue({"text": "Hello, how can I help?"})

    outputs = chat.send(tokens["admin"], cid, "hello there", options={"mode": "yaml"})

    assert kinds(outputs[-1]) == ["notice", "text"]
    assert outputs[-1][0]["metadata"]["code"] == "NO_WORKFLOW_MATCHED"
    assert "tools" in fake_llm.requests[0]  # the dynamic agent answered
    assert execution_rows(sql, cid) == []


def test_a_failing_tool_step_stops_the_workflow_with_a_clear_error(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation()

    outputs = chat.send(
        tokens["admin"], cid, "Check dashboard 999999 before deploy", options={"mode": "yaml"}
    )

    (first,) = steps_of(outputs[-1])
    assert first["status"] == "failed" and first["error"]["code"] == "NOT_FOUND"
    (error,) = of_type(outputs[-1], "error")
    assert error["metadata"]["code"] == "WORKFLOW_FAILED"
    assert "stopped at step dashboard" in error["metadata"]["message"]
    [(execution_id, _, status, _, _)] = execution_rows(sql, cid)
    assert status == "failed"
    assert step_rows(sql, execution_id)[0][3:] == (
        "failed",
        False,
        {"code": "NOT_FOUND", "message": first["error"]["message"]},
    )
    assert fake_llm.requests == []  # stopped before its llm_call step


def deployments(sql: Any) -> int:
    return int(sql.execute("select count(*) from dashboard_deployments").fetchone()[0])


def test_a_step_that_needs_confirmation_pauses_and_confirm_resumes_it_exactly_once(
    chat, tokens, conversation, fake_llm, sql, api
):
    cid = conversation()
    before = deployments(sql)

    paused = chat.send(
        tokens["admin"], cid, "Deploy dashboard 42 to staging", options={"mode": "yaml"}
    )

    final = paused[-1]
    assert kinds(final) == ["workflow_step", "workflow_step", "workflow_step", "confirm_required"]
    card = final[-1]["metadata"]
    assert card["tool"] == "deploy_dashboard" and card["call_id"].startswith("call_wf_")
    assert card["args"] == {"dashboard_id": 42, "ref": "main", "environment": "staging"}
    assert deployments(sql) == before
    [(execution_id, _, status, _, _)] = execution_rows(sql, cid)
    assert status == "waiting"
    assert step_rows(sql, execution_id)[2][3] == "waiting"

    resumed = chat.decide(tokens["admin"], cid, "confirm", confirm_id(paused))

    deploy = steps_of(resumed[-1])
    assert [(s["name"], s["status"]) for s in deploy] == [("deploy", "completed")]
    assert deployments(sql) == before + 1
    assert "is deployed to staging: version" in text_of(resumed[-1])
    assert execution_rows(sql, cid)[0][2] == "completed"
    audit = sql.execute(
        "select actor_username, service_client_id from assistant_audit"
        " where action = 'dashboard.deploy' and details->>'deployment_id' = %s",
        (str(deploy[0]["output"]["id"]),),
    ).fetchall()
    assert audit == [("admin", "agent-chat")]
    decisions = [
        m for m in history(api, tokens["admin"], cid) if m["metadata"].get("type") == "decision"
    ]
    assert [d["metadata"]["decision"] for d in decisions] == ["confirm"]

    again = chat.decide(tokens["admin"], cid, "confirm", confirm_id(paused))
    assert error_code(again) in ("NO_PENDING_CONFIRMATION", "CHECKPOINT_EXPIRED")
    assert deployments(sql) == before + 1


def test_a_paused_step_rejects_a_wrong_call_id_and_reject_stops_the_workflow(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation()
    before = deployments(sql)
    paused = chat.send(
        tokens["admin"], cid, "Выкати на стейджинг дашборд 42", options={"mode": "yaml"}
    )

    wrong = chat.decide(tokens["admin"], cid, "confirm", "call_wf_other")
    assert error_code(wrong) == "NO_PENDING_CONFIRMATION" and deployments(sql) == before

    rejected = chat.decide(tokens["admin"], cid, "reject", confirm_id(paused))

    (step,) = steps_of(rejected[-1])
    assert step["status"] == "failed" and step["error"]["code"] == "REJECTED"
    assert of_type(rejected[-1], "notice")[0]["metadata"]["code"] == "WORKFLOW_STOPPED"
    assert deployments(sql) == before
    assert execution_rows(sql, cid)[0][2] == "cancelled"


def test_a_viewer_confirming_a_workflow_deploy_is_refused_by_the_backend(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation("viewer")
    before = deployments(sql)
    paused = chat.send(
        tokens["viewer"], cid, "Deploy dashboard 42 to staging", options={"mode": "yaml"}
    )

    resumed = chat.decide(tokens["viewer"], cid, "confirm", confirm_id(paused))

    (step,) = steps_of(resumed[-1])
    assert step["status"] == "failed" and step["error"]["code"] == "FORBIDDEN"
    assert deployments(sql) == before
    assert execution_rows(sql, cid)[0][2] == "failed"


def test_a_new_message_supersedes_a_waiting_workflow_step(
    chat, tokens, conversation, fake_llm, sql, api
):
    cid = conversation()
    paused = chat.send(
        tokens["admin"], cid, "Deploy dashboard 42 to staging", options={"mode": "yaml"}
    )
    fake_llm.enqueue({"text": "Sure, something else."})

    chat.send(tokens["admin"], cid, "Never mind, something else")

    assert execution_rows(sql, cid)[0][2] == "cancelled"
    decisions = [
        m for m in history(api, tokens["admin"], cid) if m["metadata"].get("type") == "decision"
    ]
    assert decisions[0]["metadata"]["decision"] == "reject"
    assert decisions[0]["metadata"]["reason"] == "superseded by a new message"
    late = chat.decide(tokens["admin"], cid, "confirm", confirm_id(paused))
    assert error_code(late) == "NO_PENDING_CONFIRMATION"


def test_a_diagnosis_message_supersedes_a_waiting_workflow_step_too(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation()
    paused = chat.send(
        tokens["admin"], cid, "Deploy dashboard 42 to staging", options={"mode": "yaml"}
    )
    fake_llm.enqueue(
        {
            "text": '{"conclusion": null, "analysis": [], "action_plan": [], '
            '"recommendations": [], "limitations": {"checked_scope": [], '
            '"missing_info": ["which dashboard"]}}'
        }
    )

    chat.send(tokens["admin"], cid, "Why is it failing?", options={"mode": "diagnose"})

    assert execution_rows(sql, cid)[0][2] == "cancelled"
    late = chat.decide(tokens["admin"], cid, "confirm", confirm_id(paused))
    assert error_code(late) == "NO_PENDING_CONFIRMATION"


@pytest.mark.timeout(400)  # it starts two agent processes itself: slow on a loaded machine
def test_a_paused_workflow_survives_an_agent_restart(
    start_agent, tokens, conversation, fake_llm, sql
):
    from tests.agent.support import Chat

    cid = conversation()
    before = deployments(sql)
    with start_agent() as (base, _proc):
        paused = Chat(base).send(
            tokens["admin"], cid, "Deploy dashboard 42 to staging", options={"mode": "yaml"}
        )
    with start_agent() as (base, _proc):
        resumed = Chat(base).decide(tokens["admin"], cid, "confirm", confirm_id(paused))

    assert steps_of(resumed[-1])[0]["status"] == "completed"
    assert deployments(sql) == before + 1


def test_someone_elses_executions_are_404_and_a_user_token_cannot_write_them(
    chat, tokens, conversation, fake_llm, sql, api
):
    cid = conversation("admin")
    fake_llm.enqueue({"text": "Quiet."})
    chat.send(tokens["admin"], cid, "today's errors", options={"mode": "yaml"})
    [(execution_id, *_)] = execution_rows(sql, cid)

    for path in (
        f"/api/workflow/executions/{execution_id}",
        f"/api/workflow/conversations/{cid}/executions",
    ):
        mine = api.get(path, headers=bearer(tokens["admin"]))
        theirs = api.get(path, headers=bearer(tokens["viewer"]))
        assert mine.status_code == 200
        assert theirs.status_code == 404 and theirs.json()["error"]["code"] == "NOT_FOUND"
    write = api.patch(
        f"/api/workflow/executions/{execution_id}",
        json={"status": "failed"},
        headers=bearer(tokens["admin"]),
    )
    assert write.status_code == 403
    listed = api.get(
        f"/api/workflow/conversations/{cid}/executions", headers=bearer(tokens["admin"])
    )
    assert [e["id"] for e in listed.json()["items"]] == [execution_id]
    assert json.dumps(listed.json()).count('"status": "completed"') >= 1
