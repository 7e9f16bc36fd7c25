"""Fault: an agent process is SIGKILLed, mid-stream (in a tool call) or while a confirmation
waits. The client's stream ends with an error; the dead process's lease expires within its TTL
(2 s here); the retry on another agent process finds the conversation whole: the question
stored, the cut call closed as cancelled, a pending confirmation still pending and confirmable
there (with the card's call id), executed once."""

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
    sleeping_queries,
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


def test_an_agent_killed_mid_tool_loses_nothing_stored_and_another_takes_over(stack, doomed):
    cid, token = stack.conversation(), stack.tokens["admin"]
    query = {"datasource": "warehouse", "query": "SELECT pg_sleep(15) AS slept"}
    stack.llm.enqueue(
        {"text": "Let me look.", "tool_calls": [{"name": "execute_sql", "args": query}]}
    )
    job = Chat(doomed.url).submit(token, cid, "Run the slow warehouse query")
    wait_for(job, lambda m: "tool_start" in kinds(m))
    wait_until(lambda: sleeping_queries(stack.warehouse_url), what="the query")
    # The tool runs only once the model turn calling it is stored (durability="sync").
    (ai,) = [m for m in thread_messages(stack.database_url, cid) if m.type == "ai"]
    assert ai.text == "Let me look." and ai.tool_calls[0]["name"] == "execute_sql"

    doomed.kill()

    with pytest.raises(Exception):  # noqa: B017 - the client's own error for a cut stream
        collect(job)
    # The dead process's request went with it; the backend cancels its statement.
    wait_until(lambda: not sleeping_queries(stack.warehouse_url), timeout=10, what="no query")
    wait_inactive(stack.api, token, cid, timeout=5)
    stack.llm.enqueue({"text": "The last run was cut short."})
    outputs = stack.chat.send(token, cid, "What happened?")
    assert text_of(outputs[-1]) == "The last run was cut short."
    # The question was stored; the killed turn's card died with the process, its call is
    # closed as cancelled in the thread, so the model sees a valid history.
    assert roles_of(history(stack.api, token, cid)) == ["user", "user", "assistant"]
    request = stack.llm.requests[-1]
    assert_valid_for_any_provider(request)
    assert [m["role"] for m in request["messages"][1:]] == ["user", "assistant", "tool", "user"]
    assert "CANCELLED" in request["messages"][-2]["content"]
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
