"""Fault: an agent process is SIGKILLed, mid-stream or while a confirmation waits. The client's
stream ends with an error; the dead process's lease expires within its TTL (2 s here); the retry
on another agent process finds the conversation whole: the question stored, a pending
confirmation still pending and confirmable there (with the card's call id), executed once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agent.support import (
    Chat,
    assert_every_tool_call_answered,
    assert_valid_for_any_provider,
    collect,
    confirm_id,
    error_code,
    history,
    kinds,
    text_of,
    thread_messages,
    wait_for,
)
from tests.agent.test_cancel import wait_inactive
from tests.faults.support import (
    Service,
    audit_count,
    roles_of,
    wait_until,
)

DEPLOY = {"dashboard_id": 42, "ref": "main", "environment": "staging"}


@pytest.fixture(scope="module")
def spares(stack) -> Iterator[list[Service]]:
    """Two extra agent processes, started side by side, for the tests to kill."""
    made = [stack.new_agent().spawn(), stack.new_agent().spawn()]
    try:
        yield [service.ready() for service in made]
    finally:
        for service in made:
            service.stop()


@pytest.fixture()
def doomed(spares: list[Service]) -> Service:
    """An agent process of its own for the test to kill."""
    return spares.pop()


def deployments(stack) -> int:
    import psycopg

    with psycopg.connect(stack.database_url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM dashboard_deployments").fetchone()
    return int(row[0]) if row else 0


def test_an_agent_killed_mid_stream_loses_no_question_and_another_takes_over(stack, doomed):
    cid, token = stack.conversation(), stack.tokens["admin"]
    stack.llm.enqueue({"tokens": 200, "delay_ms": 50})
    job = Chat(doomed.url).submit(token, cid, "Tell me a long story")
    wait_for(job, lambda m: bool(text_of(m)))
    wait_until(lambda: history(stack.api, token, cid), what="the question's history row")

    doomed.kill()

    with pytest.raises(Exception):  # noqa: B017 - the client's own error for a cut stream
        collect(job)
    wait_inactive(stack.api, token, cid, timeout=5)
    stack.llm.enqueue({"text": "Here is a shorter one."})
    outputs = stack.chat.send(token, cid, "Tell me a short one")
    assert text_of(outputs[-1]) == "Here is a shorter one."
    # What the dead process streamed died with it; the question did not.
    assert roles_of(history(stack.api, token, cid)) == ["user", "user", "assistant"]
    request = stack.llm.requests[-1]
    assert_valid_for_any_provider(request)
    assert [m["role"] for m in request["messages"][1:]] == ["user", "user"]
    assert_every_tool_call_answered(thread_messages(stack.database_url, cid))


def test_a_confirmation_pending_on_a_killed_agent_is_confirmed_once_on_another(stack, doomed):
    cid, token = stack.conversation(), stack.tokens["admin"]
    before = deployments(stack), audit_count(stack.database_url, "dashboard.deploy")
    stack.llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": DEPLOY}]})
    outputs = Chat(doomed.url).send(token, cid, "Deploy 42 to staging")
    assert kinds(outputs[-1]) == ["confirm_required"]
    call = confirm_id(outputs)

    doomed.kill()

    stack.llm.enqueue({"text": "Deployed to staging."})
    outputs = stack.chat.decide(token, cid, "confirm", call)
    assert kinds(outputs[-1]) == ["tool_end", "text"]
    assert outputs[-1][0]["metadata"]["output"]["environment"] == "staging"
    again = stack.chat.decide(token, cid, "confirm", call)
    assert error_code(again) == "NO_PENDING_CONFIRMATION"
    after = deployments(stack), audit_count(stack.database_url, "dashboard.deploy")
    assert after == (before[0] + 1, before[1] + 1)
    assert roles_of(history(stack.api, token, cid)) == [
        "user",
        "assistant",
        "decision",
        "assistant",
    ]
    assert_valid_for_any_provider(stack.llm.requests[-1])
    assert_every_tool_call_answered(thread_messages(stack.database_url, cid))
