"""The optional `options` input (CONTRACT.md, "Agent endpoint") over the real /chat route: an
unknown key is INVALID_INPUT and nothing runs. Parsing itself: tests/agent/unit/test_inputs.py."""

from __future__ import annotations

from tests.agent.support import error_code


def test_an_unknown_key_over_the_real_route_is_invalid_input_and_calls_no_model(
    chat, tokens, conversation, fake_llm
):
    outputs = chat.send(tokens["admin"], conversation(), "hello", options='{"sneaky": true}')

    assert error_code(outputs) == "INVALID_INPUT"
    assert "sneaky" in outputs[-1][0]["metadata"]["message"]
    assert fake_llm.requests == []
