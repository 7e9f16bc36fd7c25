"""Confirmations with edited arguments (CONTRACT.md): the same tool runs once with the
person's arguments, checked against its schema first; a refused edit runs nothing and leaves
the card pending; RBAC applies to the edited call; the card's line is in the person's language."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gradio_client import Client

from tests.agent import raw_gradio
from tests.agent.support import GRADIO, collect, confirm_id, error_code, history, kinds, of_type
from tests.agent.test_confirm import DEPLOY, ask_to_deploy, deployments

PRODUCTION = {**DEPLOY, "environment": "production"}


def edit(chat, token: str, cid: str, call: str, args: Any) -> list[Any]:
    return chat.send(token, cid, action="confirm", options={"call_id": call, "args": args})


def last_deployment(sql: Any) -> tuple[int, str, str]:
    return sql.execute(
        "select dashboard_id, ref, environment from dashboard_deployments order by id desc limit 1"
    ).fetchone()


def decision_rows(api: Any, token: str, cid: str) -> list[dict[str, Any]]:
    return [m for m in history(api, token, cid) if m["metadata"].get("type") == "decision"]


def test_an_edited_confirmation_runs_exactly_the_edited_call_once(
    chat, tokens, conversation, fake_llm, sql, api
):
    cid = conversation()
    call = confirm_id(ask_to_deploy(chat, tokens["admin"], cid, fake_llm))
    before = deployments(sql)
    fake_llm.enqueue({"text": "Deployed to production."})

    outputs = edit(chat, tokens["admin"], cid, call, PRODUCTION)

    assert kinds(outputs[0]) == ["tool_start"]
    assert outputs[0][0]["metadata"]["input"] == PRODUCTION
    final = outputs[-1]
    assert kinds(final) == ["tool_end", "text"]
    card = final[0]["metadata"]
    assert card["input"] == PRODUCTION and card["call_id"] == call
    assert card["output"]["environment"] == "production"  # the result, without the model's note
    assert deployments(sql) == before + 1
    assert last_deployment(sql) == (42, "main", "production")
    tool_message = fake_llm.requests[-1]["messages"][-1]
    assert tool_message["role"] == "tool" and "edited" in tool_message["content"]
    assert '"production"' in tool_message["content"]
    (decision,) = decision_rows(api, tokens["admin"], cid)
    meta = decision["metadata"]
    assert meta["decision"] == "confirm" and meta["edited"] is True
    assert meta["args"] == PRODUCTION and meta["model_args"] == DEPLOY
    (audited,) = sql.execute(
        "select details from assistant_audit where action = 'conversation.message_append'"
        " and details->>'message_id' = %s",
        (str(decision["id"]),),
    ).fetchone()
    assert audited["decision"]["args"] == PRODUCTION
    assert audited["decision"]["model_args"] == DEPLOY
    deploy_audit = sql.execute(
        "select count(*) from assistant_audit where action = 'dashboard.deploy'"
        " and details->>'environment' = 'production' and created_at > now() - interval '1 min'"
    ).fetchone()[0]
    assert deploy_audit >= 1

    again = edit(chat, tokens["admin"], cid, call, PRODUCTION)

    assert error_code(again) == "NO_PENDING_CONFIRMATION" and deployments(sql) == before + 1


@pytest.mark.parametrize(
    "args",
    [
        {**DEPLOY, "environment": "the-moon"},
        {"dashboard_id": 42, "ref": "main"},
        {**DEPLOY, "dashboard_id": "forty-two"},
        {**DEPLOY, "force": True},
        "not an object",
    ],
    ids=["bad-value", "missing", "wrong-type", "unknown-argument", "not-an-object"],
)
def test_a_refused_edit_runs_nothing_and_leaves_the_card_pending(
    chat, tokens, conversation, fake_llm, sql, api, args
):
    cid = conversation()
    call = confirm_id(ask_to_deploy(chat, tokens["admin"], cid, fake_llm))
    before = deployments(sql)
    asked = len(fake_llm.requests)

    refused = edit(chat, tokens["admin"], cid, call, args)

    assert error_code(refused) == "INVALID_INPUT"
    assert deployments(sql) == before and len(fake_llm.requests) == asked
    assert decision_rows(api, tokens["admin"], cid) == []
    fake_llm.enqueue({"text": "Deployed to staging."})
    confirmed = chat.decide(tokens["admin"], cid, "confirm", call)
    assert kinds(confirmed[-1]) == ["tool_end", "text"]
    assert deployments(sql) == before + 1 and last_deployment(sql) == (42, "main", "staging")


def test_an_unknown_argument_is_named_in_the_refusal(chat, tokens, conversation, fake_llm):
    cid = conversation()
    call = confirm_id(ask_to_deploy(chat, tokens["admin"], cid, fake_llm))

    refused = edit(chat, tokens["admin"], cid, call, {**DEPLOY, "force": True})

    message = refused[-1][0]["metadata"]["message"]
    assert "force" in message and "nothing was run" in message


def test_a_viewer_cannot_edit_their_way_into_a_forbidden_call(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation("viewer")
    call = confirm_id(ask_to_deploy(chat, tokens["viewer"], cid, fake_llm))
    before = deployments(sql)
    fake_llm.enqueue({"text": "You need the admin role."})

    outputs = edit(chat, tokens["viewer"], cid, call, PRODUCTION)

    error = of_type(outputs[-1], "tool_error")[0]
    assert error["metadata"]["error"]["code"] == "FORBIDDEN"
    assert error["metadata"]["input"] == PRODUCTION
    assert deployments(sql) == before


def test_args_go_only_with_a_confirmation(chat, tokens, conversation, fake_llm):
    cid = conversation()
    ask_to_deploy(chat, tokens["admin"], cid, fake_llm)

    refused = chat.send(tokens["admin"], cid, action="reject", options={"args": DEPLOY})

    assert error_code(refused) == "INVALID_INPUT"


def test_the_card_carries_the_argument_schema_for_its_edit_form(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()

    card = of_type(ask_to_deploy(chat, tokens["admin"], cid, fake_llm)[-1], "confirm_required")[0]

    schema = card["metadata"]["schema"]
    assert schema["required"] == ["dashboard_id", "ref", "environment"]
    assert schema["properties"]["environment"]["enum"] == ["staging", "production"]
    assert card["metadata"]["allowed"] == ["confirm", "reject"]


def test_a_russian_page_gets_a_russian_card(agent_url, tokens, conversation, fake_llm):
    cid = conversation()
    client = Client(
        agent_url + GRADIO,
        headers={"Authorization": f"Bearer {tokens['admin']}", "Accept-Language": "ru,en;q=0.8"},
        verbose=False,
        download_files=False,
    )
    fake_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": DEPLOY}]})

    job = client.submit(
        message={"text": "Разверни дашборд 42 на staging", "files": []},
        conversation_id=cid,
        action="",
        focus="",
        options="",
        api_name="/chat",
    )
    card = of_type(collect(job)[-1], "confirm_required")[0]

    assert card["metadata"]["description"] == "Развернуть дашборд 42 (main) в staging"
    assert card["content"] == card["metadata"]["description"]


def test_an_english_or_absent_accept_language_gets_the_english_card(
    chat, tokens, conversation, fake_llm
):
    cid = conversation()

    card = of_type(ask_to_deploy(chat, tokens["admin"], cid, fake_llm)[-1], "confirm_required")[0]

    assert card["metadata"]["description"] == "Deploy dashboard 42 (main) to staging"


def test_raw_http_edited_confirm_runs_the_edited_call_and_refuses_unknown_arguments(
    agent_url, tokens, conversation, fake_llm, sql
):
    cid = conversation()
    token = tokens["admin"]
    fake_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": DEPLOY}]})
    asked = raw_gradio.call(
        agent_url,
        token,
        [{"text": "Разверни 42", "files": []}, cid, "", "", ""],
        extra_headers={"Accept-Language": "ru"},
    )
    card = of_type(asked[-1], "confirm_required")[0]["metadata"]
    assert card["description"].startswith("Развернуть дашборд 42")
    before = deployments(sql)

    def confirm(args: Any) -> list[Any]:
        options = json.dumps({"call_id": card["call_id"], "args": args})
        return raw_gradio.call(
            agent_url, token, [{"text": "", "files": []}, cid, "confirm", "", options]
        )

    refused = confirm({**PRODUCTION, "environment": "production", "extra": 1})
    assert kinds(refused[-1]) == ["error"]
    assert refused[-1][0]["metadata"]["code"] == "INVALID_INPUT" and deployments(sql) == before
    fake_llm.enqueue({"text": "Done."})

    ran = confirm(PRODUCTION)

    assert kinds(ran[-1]) == ["tool_end", "text"] and ran[-1][0]["metadata"]["input"] == PRODUCTION
    assert deployments(sql) == before + 1 and last_deployment(sql) == (42, "main", "production")


def test_a_workflow_steps_confirmation_takes_an_edit_the_same_way(
    chat, tokens, conversation, sql, api
):
    cid = conversation()
    token = tokens["admin"]
    paused = chat.send(token, cid, "Deploy dashboard 42 to staging", options={"mode": "yaml"})
    card = of_type(paused[-1], "confirm_required")[0]["metadata"]
    assert card["schema"]["properties"]["environment"]["enum"] == ["staging", "production"]
    before = deployments(sql)

    refused = edit(chat, token, cid, card["call_id"], {**PRODUCTION, "force": True})
    assert error_code(refused) == "INVALID_INPUT" and deployments(sql) == before

    ran = edit(chat, token, cid, card["call_id"], PRODUCTION)

    step = of_type(ran[-1], "workflow_step")[0]["metadata"]
    assert step["status"] == "completed" and step["input"] == PRODUCTION
    assert deployments(sql) == before + 1 and last_deployment(sql) == (42, "main", "production")
    (decision,) = decision_rows(api, token, cid)
    assert decision["metadata"]["model_args"] == DEPLOY and decision["metadata"]["edited"]
