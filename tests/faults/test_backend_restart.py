"""Fault: the backend restarts while a tool call waits on it (a long query on the `warehouse`
datasource). The call ends as a tool error (the model is told the platform failed; the agent
never resends a request that may have run), the turn is answered and both history rows are
stored once the backend is back, and the next turn works."""

from __future__ import annotations

from tests.agent.support import (
    assert_every_tool_call_answered,
    assert_valid_for_any_provider,
    collect,
    history,
    kinds,
    of_type,
    text_of,
    thread_messages,
    wait_for,
)
from tests.faults.support import (
    audit_count,
    roles_of,
    sleeping_queries,
    wait_until,
)

SLOW = "SELECT pg_sleep(20) AS slept"


def test_a_backend_restart_mid_tool_is_a_tool_error_and_nothing_is_lost(stack):
    cid, token = stack.conversation(), stack.tokens["admin"]
    query = {"datasource": "warehouse", "query": SLOW}
    stack.llm.enqueue(
        {"tool_calls": [{"name": "execute_sql", "args": query}]},
        {"text": "The platform failed while running the query."},
    )
    job = stack.chat.submit(token, cid, "Run the slow warehouse query")
    wait_for(job, lambda m: "tool_start" in kinds(m))
    wait_until(lambda: sleeping_queries(stack.warehouse_url), what="the query")

    stack.backend.kill()
    stack.backend.start()
    # The killed backend's statement does not run on for nobody (client_connection_check).
    wait_until(lambda: not sleeping_queries(stack.warehouse_url), timeout=10, what="no query")

    outputs = collect(job)
    assert kinds(outputs[-1]) == ["tool_error", "text"]
    (card,) = of_type(outputs[-1], "tool_error")
    assert card["metadata"]["error"]["code"] == "BACKEND_UNAVAILABLE"
    assert text_of(outputs[-1]) == "The platform failed while running the query."
    assert roles_of(history(stack.api, token, cid)) == ["user", "assistant"]
    assert audit_count(stack.database_url, "conversation.message_append", resource_id=cid) == 2
    # Not resent: the restarted backend runs no second copy of the query.
    assert not sleeping_queries(stack.warehouse_url)
    stack.llm.enqueue({"text": "All good now."})
    last = stack.chat.send(token, cid, "Is it back?")[-1]
    assert text_of(last) == "All good now.", last
    assert_valid_for_any_provider(stack.llm.requests[-1])
    assert_every_tool_call_answered(thread_messages(stack.database_url, cid))
