"""Fault: the person stops a turn while a long query runs. The agent abandons the backend
request (its HTTP request is cancelled), the backend cancels the statement on the database when
its client goes away (nothing is left running in pg_stat_activity, long before the 30 s
statement timeout), the card ends as CANCELLED and the next turn works."""

from __future__ import annotations

import time

from tests.agent.support import (
    assert_every_tool_call_answered,
    assert_valid_for_any_provider,
    history,
    kinds,
    text_of,
    thread_messages,
    wait_for,
)
from tests.agent.test_cancel import wait_inactive
from tests.faults.support import (
    audit_count,
    roles_of,
    sleeping_queries,
    wait_until,
)

SLOW = "SELECT pg_sleep(25) AS slept"


def test_cancel_mid_tool_abandons_the_request_and_cancels_the_query(stack):
    cid, token = stack.conversation(), stack.tokens["admin"]
    query = {"datasource": "warehouse", "query": SLOW}
    stack.llm.enqueue({"tool_calls": [{"name": "execute_sql", "args": query}]})
    job = stack.chat.submit(token, cid, "Run the slow warehouse query")
    wait_for(job, lambda m: "tool_start" in kinds(m))
    wait_until(lambda: sleeping_queries(stack.warehouse_url), what="the query")

    job.cancel()
    cancelled_at = time.monotonic()

    wait_until(
        lambda: not sleeping_queries(stack.warehouse_url),
        timeout=10,
        what="the query to be cancelled on the database",
    )
    assert time.monotonic() - cancelled_at < 10  # the statement timeout is 30 s
    wait_inactive(stack.api, token, cid)
    stored = history(stack.api, token, cid)
    assert roles_of(stored) == ["user", "assistant"]
    parts = stored[-1]["metadata"]["parts"]
    assert parts[-1]["metadata"]["type"] == "tool_error"
    assert parts[-1]["metadata"]["error"]["code"] == "CANCELLED"
    assert audit_count(stack.database_url, "conversation.message_append", resource_id=cid) == 2
    stack.llm.enqueue({"text": "Stopped."})
    assert text_of(stack.chat.send(token, cid, "Never mind")[-1]) == "Stopped."
    request = stack.llm.requests[-1]
    assert_valid_for_any_provider(request)
    assert "CANCELLED" in request["messages"][-2]["content"]
    assert_every_tool_call_answered(thread_messages(stack.database_url, cid))
