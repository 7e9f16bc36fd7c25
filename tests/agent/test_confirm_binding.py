"""Issue 9.2: a confirmation approves only the call on the card the person saw.

`confirm` must carry `options.call_id` equal to the pending call's id; a missing, wrong or
stale id is NO_PENDING_CONFIRMATION and nothing runs (no deployment row, no deploy audit row);
`reject` without a call id rejects whatever is pending.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agent import raw_gradio
from tests.agent.support import confirm_id, error_code, kinds, of_type

STAGING = {"dashboard_id": 42, "ref": "main", "environment": "staging"}
PRODUCTION = {"dashboard_id": 42, "ref": "main", "environment": "production"}


def counts(sql: Any) -> tuple[int, int]:
    """(deployment rows, deploy audit rows)."""
    deployments = sql.execute("select count(*) from dashboard_deployments").fetchone()[0]
    audits = sql.execute(
        "select count(*) from assistant_audit where action = 'dashboard.deploy'"
    ).fetchone()[0]
    return int(deployments), int(audits)


def propose(chat, token, cid, fake_llm, args, text="Deploy dashboard 42") -> str:
    fake_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": args}]})
    outputs = chat.send(token, cid, text)
    assert kinds(outputs[-1])[-1] == "confirm_required"
    return confirm_id(outputs)


@pytest.mark.parametrize(
    "options", [{}, {"call_id": "call_someone_else"}, '{"call_id": ""}'], ids=str
)
def test_a_confirm_without_the_pending_calls_id_runs_nothing(
    chat, tokens, conversation, fake_llm, sql, options
):
    cid = conversation()
    call = propose(chat, tokens["admin"], cid, fake_llm, STAGING)
    before = counts(sql)

    outputs = chat.send(tokens["admin"], cid, action="confirm", options=options)

    assert error_code(outputs) in ("NO_PENDING_CONFIRMATION", "INVALID_INPUT")
    assert counts(sql) == before and len(fake_llm.requests) == 1
    fake_llm.enqueue({"text": "Deployed."})
    assert kinds(chat.decide(tokens["admin"], cid, "confirm", call)[-1]) == ["tool_end", "text"]
    assert counts(sql) == (before[0] + 1, before[1] + 1)


def test_the_stale_card_of_another_tab_cannot_approve_what_replaced_it(
    chat, tokens, conversation, fake_llm, sql
):
    """Tab B rejects staging, the model proposes production; tab A still shows staging."""
    cid = conversation()
    staging = propose(chat, tokens["admin"], cid, fake_llm, STAGING)
    fake_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": PRODUCTION}]})
    rejected = chat.decide(tokens["admin"], cid, "reject", staging)  # tab B
    production = confirm_id(rejected)
    assert production != staging
    assert of_type(rejected[-1], "confirm_required")[0]["metadata"]["args"] == PRODUCTION
    before = counts(sql)

    outputs = chat.decide(tokens["admin"], cid, "confirm", staging)  # tab A, stale card

    assert error_code(outputs) == "NO_PENDING_CONFIRMATION"
    assert "nothing was run" in outputs[-1][0]["metadata"]["message"]
    assert counts(sql) == before
    # the production card is still pending and still answerable by its own id
    fake_llm.enqueue({"text": "Not deploying to production."})
    final = chat.decide(tokens["admin"], cid, "reject", production)
    assert of_type(final[-1], "tool_error")[0]["metadata"]["error"]["code"] == "REJECTED"
    assert counts(sql) == before


def test_a_card_superseded_by_a_new_message_cannot_be_confirmed(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation()
    old = propose(chat, tokens["admin"], cid, fake_llm, STAGING)
    new = propose(chat, tokens["admin"], cid, fake_llm, PRODUCTION, "No, production instead")
    before = counts(sql)

    assert error_code(chat.decide(tokens["admin"], cid, "confirm", old)) == (
        "NO_PENDING_CONFIRMATION"
    )
    assert counts(sql) == before

    fake_llm.enqueue({"text": "Deployed to production."})
    done = chat.decide(tokens["admin"], cid, "confirm", new)
    assert of_type(done[-1], "tool_end")[0]["metadata"]["output"]["environment"] == "production"
    assert counts(sql) == (before[0] + 1, before[1] + 1)


def test_a_reject_without_a_call_id_rejects_what_is_pending(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation()
    propose(chat, tokens["admin"], cid, fake_llm, STAGING)
    before = counts(sql)
    fake_llm.enqueue({"text": "Fine, nothing deployed."})

    outputs = chat.send(tokens["admin"], cid, action="reject")

    assert of_type(outputs[-1], "tool_error")[0]["metadata"]["error"]["code"] == "REJECTED"
    assert counts(sql) == before


def test_over_gradios_raw_api_a_forged_call_id_or_another_users_confirm_runs_nothing(
    chat, agent_url, tokens, conversation, fake_llm, sql
):
    """The same rule through POST /gradio_api/call/chat (no gradio_client): a forged id, and the
    right id sent by someone who does not own the conversation."""
    cid = conversation()
    call = propose(chat, tokens["admin"], cid, fake_llm, STAGING)
    before = counts(sql)
    message = {"text": "", "files": []}

    forged = raw_gradio.call(
        agent_url, tokens["admin"], [message, cid, "confirm", "", '{"call_id": "call_forged"}']
    )
    stranger = raw_gradio.call(
        agent_url, tokens["editor"], [message, cid, "confirm", "", json.dumps({"call_id": call})]
    )

    assert error_code(forged) == "NO_PENDING_CONFIRMATION"
    assert error_code(stranger) == "NOT_FOUND"
    assert counts(sql) == before and len(fake_llm.requests) == 1
    fake_llm.enqueue({"text": "Deployed."})
    assert kinds(chat.decide(tokens["admin"], cid, "confirm", call)[-1]) == ["tool_end", "text"]
    assert counts(sql) == (before[0] + 1, before[1] + 1)
