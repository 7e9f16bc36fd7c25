"""Cancel (FR-014) and the per-conversation lease: stop cleanly, keep what was seen, one run."""

from __future__ import annotations

import time

from tests.agent.support import (
    assert_valid_for_any_provider,
    collect,
    error_code,
    history,
    kinds,
    of_type,
    text_of,
    wait_for,
)
from tests.conftest import bearer

# A read-only query the sample SQLite datasource needs a while to answer.
SLOW_SQL = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000000) "
    "SELECT max(x) FROM c"
)


def active(api, token: str, cid: str) -> bool:
    response = api.get(f"/api/agent/conversations/{cid}/active", headers=bearer(token))
    assert response.status_code == 200, response.text
    return bool(response.json()["active"])


def wait_inactive(api, token: str, cid: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while active(api, token, cid):
        assert time.monotonic() < deadline, "the lease was not released"
        time.sleep(0.05)


def test_cancel_mid_tokens_keeps_the_partial_text_and_the_next_turn_works(
    chat, tokens, conversation, fake_llm, api
):
    cid = conversation()
    fake_llm.enqueue({"tokens": 60, "delay_ms": 80})
    job = chat.submit(tokens["admin"], cid, "Tell me a long story")
    seen = text_of(wait_for(job, lambda m: len(text_of(m)) >= 9))

    job.cancel()

    wait_inactive(api, tokens["admin"], cid)
    stored = history(api, tokens["admin"], cid)
    assert stored[-1]["role"] == "assistant"
    partial = stored[-1]["content"]
    assert partial.startswith(seen) and partial.startswith("t0 t1") and len(partial) < 60 * 3
    fake_llm.enqueue({"text": "Here is the short version."})
    outputs = chat.send(tokens["admin"], cid, "Shorter please")
    assert text_of(outputs[-1]) == "Here is the short version."
    request = fake_llm.requests[-1]
    assert [m["role"] for m in request["messages"][1:]] == ["user", "assistant", "user"]
    assert request["messages"][2]["content"] == partial
    assert_valid_for_any_provider(request)


def test_cancel_mid_tool_leaves_no_dangling_tool_call(chat, tokens, conversation, fake_llm, api):
    cid = conversation()
    fake_llm.enqueue(
        {
            "tool_calls": [
                {"name": "execute_sql", "args": {"datasource": "sample", "query": SLOW_SQL}}
            ]
        }
    )
    job = chat.submit(tokens["admin"], cid, "Count to twenty million")
    wait_for(job, lambda m: "tool_start" in kinds(m))
    time.sleep(0.2)

    job.cancel()

    wait_inactive(api, tokens["admin"], cid)
    parts = history(api, tokens["admin"], cid)[-1]["metadata"]["parts"]
    assert parts[-1]["metadata"]["type"] == "tool_error"
    assert parts[-1]["metadata"]["error"]["code"] == "CANCELLED"
    fake_llm.enqueue({"text": "Stopped as you asked."})
    outputs = chat.send(tokens["admin"], cid, "Never mind")
    assert text_of(outputs[-1]) == "Stopped as you asked."
    request = fake_llm.requests[-1]
    assert_valid_for_any_provider(request)
    assert "CANCELLED" in request["messages"][-2]["content"]


def test_a_second_send_while_a_run_holds_the_conversation_is_busy(
    chat, tokens, conversation, fake_llm, api
):
    cid = conversation()
    fake_llm.enqueue({"tokens": 15, "delay_ms": 60})
    first = chat.submit(tokens["admin"], cid, "Long answer please")
    wait_for(first, lambda m: len(text_of(m)) > 0)

    assert active(api, tokens["admin"], cid)
    assert error_code(chat.send(tokens["admin"], cid, "Me too")) == "CONVERSATION_BUSY"

    outputs = collect(first)
    assert text_of(outputs[-1]).startswith("t0 t1") and not of_type(outputs[-1], "error")
    wait_inactive(api, tokens["admin"], cid)
    assert len(fake_llm.requests) == 1
