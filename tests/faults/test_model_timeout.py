"""Fault: the model hangs past `llm.request_timeout_s` (5 s here), before its first token or
in the middle of its answer. After one visible retry the turn ends with LLM_ERROR, the thread
holds nothing the model did not finish, and the next turn works."""

from __future__ import annotations

import pytest

from tests.agent.support import (
    assert_every_tool_call_answered,
    assert_valid_for_any_provider,
    error_code,
    history,
    kinds,
    of_type,
    text_of,
    thread_messages,
)
from tests.faults.support import roles_of

SQL = {"datasource": "warehouse", "query": "SELECT 1 AS one"}
HANGS = {
    "before_the_first_token": {"hang_s": 20},
    "mid_answer": {"text": "Half an answer that never", "hang_after_tokens": 3},
}


@pytest.mark.parametrize("hang", HANGS.values(), ids=HANGS.keys())
def test_a_model_hanging_past_its_timeout_is_llm_error_and_the_next_turn_works(stack, hang):
    cid, token = stack.conversation(), stack.tokens["admin"]
    stack.llm.enqueue({"tool_calls": [{"name": "execute_sql", "args": SQL}]}, hang, hang)

    outputs = stack.chat.send(token, cid, "Query the warehouse")

    assert error_code(outputs) == "LLM_ERROR"
    (error,) = of_type(outputs[-1], "error")
    assert error["metadata"]["message"] == "The language model did not answer in time."
    assert kinds(outputs[-1])[0] == "tool_end" and len(stack.llm.requests) == 3
    stack.llm.enqueue({"text": "Answering now."})
    assert text_of(stack.chat.send(token, cid, "Try again")[-1]) == "Answering now."
    assert_valid_for_any_provider(stack.llm.requests[-1])
    assert roles_of(history(stack.api, token, cid)) == ["user", "assistant"] * 2
    messages = thread_messages(stack.database_url, cid)
    assert_every_tool_call_answered(messages)
    # The unfinished answer never entered the thread: the model sees its tool result, then
    # the next question.
    assert [m.type for m in messages] == ["human", "ai", "tool", "human", "ai"]
