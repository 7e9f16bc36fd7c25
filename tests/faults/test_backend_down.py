"""Fault: the backend is down when a message is sent. The stream says BACKEND_UNAVAILABLE at
once, the model is never called (nothing could be stored or checked), and once the backend is
back the same conversation works."""

from __future__ import annotations

from tests.agent.support import error_code, history, of_type, text_of
from tests.faults.support import roles_of


def test_the_backend_down_at_submit_is_backend_unavailable_without_a_model_call(stack):
    cid, token = stack.conversation(), stack.tokens["admin"]
    stack.backend.stop()
    try:
        outputs = stack.chat.send(token, cid, "Show dashboard 42")
    finally:
        stack.backend.start()

    assert error_code(outputs) == "BACKEND_UNAVAILABLE"
    (error,) = of_type(outputs[-1], "error")
    assert "not answering" in error["metadata"]["message"]
    assert stack.llm.requests == []
    assert history(stack.api, token, cid) == []
    stack.llm.enqueue({"text": "Back in business."})
    assert text_of(stack.chat.send(token, cid, "Show dashboard 42")[-1]) == "Back in business."
    assert roles_of(history(stack.api, token, cid)) == ["user", "assistant"]
    assert len(stack.llm.requests) == 1
