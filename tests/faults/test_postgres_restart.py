"""Fault: the database restarts while an answer streams, or is away when a step of the turn must
be stored. The turn waits for it and completes, both history rows and their audit rows are
kept, the thread holds no unanswered tool call, and the next turn works on fresh connections."""

from __future__ import annotations

import time

from tests.agent.support import (
    assert_every_tool_call_answered,
    assert_valid_for_any_provider,
    collect,
    error_code,
    history,
    kinds,
    text_of,
    thread_messages,
    wait_for,
)
from tests.faults.support import (
    audit_count,
    roles_of,
    wait_until,
)

SQL = {"datasource": "warehouse", "query": "SELECT 1 AS one"}


def test_a_postgres_restart_mid_stream_loses_nothing_and_the_next_turn_works(stack):
    cid, token = stack.conversation(), stack.tokens["admin"]
    stack.llm.enqueue(
        {"tool_calls": [{"name": "execute_sql", "args": SQL}]},
        {"tokens": 30, "delay_ms": 100},
    )
    job = stack.chat.submit(token, cid, "Run a query and tell me about it")
    wait_for(job, lambda m: len(text_of(m)) >= 6)

    stack.postgres.restart()

    outputs = collect(job)
    assert error_code(outputs) is None, outputs[-1]
    assert kinds(outputs[-1]) == ["tool_end", "text"]
    assert text_of(outputs[-1]).startswith("t0 t1") and text_of(outputs[-1]).endswith("t29 ")
    wait_until(lambda: len(history(stack.api, token, cid)) == 2, what="both history rows")
    assert roles_of(history(stack.api, token, cid)) == ["user", "assistant"]
    assert audit_count(stack.database_url, "conversation.message_append", resource_id=cid) == 2
    stack.llm.enqueue({"text": "Still here."})
    assert text_of(stack.chat.send(token, cid, "Are you still there?")[-1]) == "Still here."
    assert_valid_for_any_provider(stack.llm.requests[-1])
    messages = thread_messages(stack.database_url, cid)
    assert_every_tool_call_answered(messages)
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai", "human", "ai"]


def test_a_database_away_when_a_step_is_stored_holds_the_turn_until_it_is_back(stack):
    cid, token = stack.conversation(), stack.tokens["admin"]
    stack.llm.enqueue({"tokens": 6, "delay_ms": 150})
    job = stack.chat.submit(token, cid, "A short answer, please")
    wait_until(lambda: history(stack.api, token, cid), what="the question's history row")

    stack.postgres.halt()
    try:
        wait_for(job, lambda m: text_of(m).endswith("t5 "))  # the model is done ...
        time.sleep(2)
        assert not job.done()  # ... and its step waits to be stored
    finally:
        stack.postgres.start()

    outputs = collect(job)
    assert error_code(outputs) is None and text_of(outputs[-1]) == "t0 t1 t2 t3 t4 t5 "
    wait_until(lambda: len(history(stack.api, token, cid)) == 2, what="both history rows")
    assert roles_of(history(stack.api, token, cid)) == ["user", "assistant"]
    stack.llm.enqueue({"text": "Still here."})
    assert text_of(stack.chat.send(token, cid, "Are you still there?")[-1]) == "Still here."
    messages = thread_messages(stack.database_url, cid)
    assert [m.type for m in messages] == ["human", "ai", "human", "ai"]
