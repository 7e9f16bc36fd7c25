"""Fault: the model's server cuts the connection in the middle of a streamed answer. A cut is
retried once (the partial text of the cut attempt is withdrawn from the stream); a second cut
ends the turn with LLM_ERROR: the partial text the person saw stays on screen and in the
history row, but never enters the model's thread, and the next turn works."""

from __future__ import annotations

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

CUT = {"text": "Dashboard 42 is failing because", "drop_after_tokens": 3}


def test_one_dropped_stream_is_retried_and_its_partial_text_withdrawn(stack):
    cid, token = stack.conversation(), stack.tokens["admin"]
    stack.llm.enqueue(CUT, {"text": "Dashboard 42 is healthy."})

    outputs = stack.chat.send(token, cid, "How is dashboard 42?")

    assert error_code(outputs) is None
    assert kinds(outputs[-1]) == ["text"] and text_of(outputs[-1]) == "Dashboard 42 is healthy."
    assert len(stack.llm.requests) == 2
    assert history(stack.api, token, cid)[-1]["content"] == "Dashboard 42 is healthy."


def test_a_stream_dropped_twice_is_llm_error_and_the_next_turn_works(stack):
    cid, token = stack.conversation(), stack.tokens["admin"]
    stack.llm.enqueue(CUT, CUT)

    outputs = stack.chat.send(token, cid, "How is dashboard 42?")

    assert error_code(outputs) == "LLM_ERROR"
    (error,) = of_type(outputs[-1], "error")
    assert "language model" in error["metadata"]["message"]
    assert text_of(outputs[-1]) == "Dashboard 42 is "
    stored = history(stack.api, token, cid)
    assert roles_of(stored) == ["user", "assistant"]
    assert stored[-1]["content"] == "Dashboard 42 is "
    stack.llm.enqueue({"text": "Let me try that again: it is healthy."})
    assert text_of(stack.chat.send(token, cid, "Again?")[-1]).startswith("Let me try")
    request = stack.llm.requests[-1]
    assert_valid_for_any_provider(request)
    assert [m["role"] for m in request["messages"][1:]] == ["user", "user"]
    messages = thread_messages(stack.database_url, cid)
    assert_every_tool_call_answered(messages)
    assert [m.type for m in messages] == ["human", "human", "ai"]
