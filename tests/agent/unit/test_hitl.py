"""The confirmation binding (agent/hitl.py): a decision resumes only the call it names, and
calls that will never run get a result so the thread stays valid. No processes."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.hitl import ConfirmationError, Pending, closing_messages, decision_record, resolve
from agent.stream import messages
from tests.agent.unit.scripted import approval, say, snapshot

ASKED = [HumanMessage("deploy 7"), say("", ("deploy_dashboard", "call_7", {"dashboard_id": 7}))]


def waiting(*call_ids: str):
    return snapshot(ASKED, [approval(c, dashboard_id=7) for c in call_ids])


def code_of(state, action: str, call_id: str | None) -> str:
    with pytest.raises(ConfirmationError) as caught:
        resolve(state, action, call_id)
    return str(caught.value.code)


def test_a_confirm_naming_the_pending_call_resumes_exactly_that_interrupt_with_approve():
    pending, command = resolve(waiting("call_7"), "confirm", "call_7")

    assert pending.call_id == "call_7" and pending.tool == "deploy_dashboard"
    assert command.resume == {"interrupt-call_7": {"type": "approve"}}


def test_a_confirm_naming_another_call_or_no_call_resumes_nothing():
    assert code_of(waiting("call_7"), "confirm", "call_other") == "NO_PENDING_CONFIRMATION"
    assert code_of(waiting("call_7"), "confirm", None) == "NO_PENDING_CONFIRMATION"
    assert code_of(waiting("call_7"), "confirm", "") == "NO_PENDING_CONFIRMATION"


def test_only_the_oldest_pending_call_can_be_decided():
    assert resolve(waiting("call_1", "call_2"), "confirm", "call_1")[0].call_id == "call_1"
    assert code_of(waiting("call_1", "call_2"), "confirm", "call_2") == "NO_PENDING_CONFIRMATION"


def test_a_reject_may_omit_the_call_id_but_not_name_a_wrong_one():
    pending, command = resolve(waiting("call_7"), "reject")

    assert pending.call_id == "call_7"
    assert command.resume == {"interrupt-call_7": {"type": "reject"}}
    assert code_of(waiting("call_7"), "reject", "call_other") == "NO_PENDING_CONFIRMATION"


def test_a_cleared_thread_an_idle_thread_and_an_unknown_action_are_told_apart():
    assert code_of(snapshot(None), "confirm", "call_7") == "CHECKPOINT_EXPIRED"
    assert code_of(snapshot(ASKED), "confirm", "call_7") == "NO_PENDING_CONFIRMATION"
    assert code_of(waiting("call_7"), "approve", "call_7") == "INVALID_INPUT"


def test_an_interrupt_that_is_not_a_tool_approval_is_not_pending():
    other = approval("call_7")
    other = type(other)(value={"type": "workflow_step"}, id="x")
    assert code_of(snapshot(ASKED, [other]), "reject", None) == "NO_PENDING_CONFIRMATION"


def test_the_card_metadata_and_the_stored_record_carry_the_call():
    pending = Pending.from_interrupt(approval("call_7", dashboard_id=7))
    assert pending is not None
    card = messages.confirm_required(
        "thread-1", pending.tool, pending.call_id, pending.args, pending.description
    )

    assert card == {
        "type": "confirm_required",
        "thread_id": "thread-1",
        "tool": "deploy_dashboard",
        "call_id": "call_7",
        "args": {"dashboard_id": 7},
        "description": "Deploy dashboard 7",
        "allowed": ["confirm", "reject"],
    }
    assert Pending.from_record(pending.record()) == Pending(
        "", "deploy_dashboard", "call_7", {"dashboard_id": 7}, "Deploy dashboard 7"
    )
    assert Pending.from_record({"tool": "x"}) is None


def test_a_decision_record_audits_who_decided_what():
    pending = Pending("i", "deploy_dashboard", "call_7", {"dashboard_id": 7}, "Deploy 7")

    confirmed = decision_record(pending, "confirm")
    rejected = decision_record(pending, "reject", reason="wrong dashboard")

    assert confirmed["content"] == "Confirmed: Deploy 7" and "reason" not in confirmed["metadata"]
    assert rejected["content"] == "Rejected: Deploy 7"
    assert rejected["metadata"] == {
        "type": "decision",
        "decision": "reject",
        "tool": "deploy_dashboard",
        "call_id": "call_7",
        "args": {"dashboard_id": 7},
        "reason": "wrong dashboard",
    }


def test_closing_gives_every_open_call_an_error_result_and_keeps_the_results_it_has():
    done = ToolMessage('{"ok": true}', tool_call_id="call_a", name="search_dashboards")
    ai = say("", ("search_dashboards", "call_a", {}), ("deploy_dashboard", "call_b", {}))
    state = snapshot([HumanMessage("go"), ai, done])

    closing = closing_messages(state, reason="cancelled")

    assert [m.tool_call_id for m in closing] == ["call_a", "call_b"]  # type: ignore[attr-defined]
    assert closing[0] is done
    last = closing[1]
    assert isinstance(last, ToolMessage) and last.status == "error"
    assert last.name == "deploy_dashboard"
    error = json.loads(str(last.content))["error"]
    assert error["code"] == "CANCELLED" and "may or may not have taken effect" in error["message"]


def test_a_rejected_call_is_closed_as_not_executed():
    closing = closing_messages(waiting("call_7"), reason="rejected")

    (only,) = closing
    error = json.loads(str(only.content))["error"]
    assert error["code"] == "REJECTED" and "was not executed" in error["message"]


def test_nothing_to_close_when_every_call_has_its_result_or_the_last_answer_is_text():
    answered = [*ASKED, ToolMessage("{}", tool_call_id="call_7", name="deploy_dashboard")]
    assert closing_messages(snapshot(answered), reason="cancelled") == []
    assert closing_messages(snapshot([*answered, AIMessage("done")]), reason="cancelled") == []
    assert (
        closing_messages(snapshot([HumanMessage("hi"), AIMessage("hi")]), reason="cancelled") == []
    )
    assert closing_messages(snapshot(None), reason="cancelled") == []


def test_a_call_left_open_before_newer_messages_is_closed_too():
    # A run that lost its lease to a takeover wrote its tool call after the new run had read
    # the thread (the chaos soak, issue 37): the call sits before the newer turn's messages.
    stale = say("", ("get_dashboard", "call_x", {"dashboard_id": 1}))
    newer = [HumanMessage("and now?"), AIMessage("Here.")]
    state = snapshot([HumanMessage("look at 1"), stale, *newer])

    (closed,) = closing_messages(state, reason="cancelled")

    assert closed.tool_call_id == "call_x" and closed.status == "error"  # type: ignore[attr-defined]
    assert json.loads(str(closed.content))["error"]["code"] == "CANCELLED"


def test_an_earlier_open_call_is_closed_after_the_last_turns_own_results():
    stale = say("", ("get_dashboard", "call_x", {}))
    last = say("", ("search_dashboards", "call_a", {}))
    state = snapshot([HumanMessage("1"), stale, HumanMessage("2"), last])

    closing = closing_messages(state, reason="cancelled")

    assert [m.tool_call_id for m in closing] == ["call_a", "call_x"]  # type: ignore[attr-defined]
