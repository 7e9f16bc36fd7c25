"""The optional `options` input (CONTRACT.md, "Agent endpoint"), checked at the boundary and
over the real /chat route: an unknown key or a bad value is INVALID_INPUT and nothing runs."""

from __future__ import annotations

import json

import pytest

from agent import inputs
from tests.agent.support import error_code

CID = "6f1c1f7e-8a0e-4a53-9d0b-8b9a4c1d2e3f"


def parse(options: object) -> inputs.Submit:
    return inputs.parse({"text": "hi", "files": []}, CID, "", "", options, max_chars=1000)


def test_no_options_means_the_configured_mode_and_nothing_else():
    submit = inputs.parse({"text": "hi"}, CID, "", "", "", max_chars=10, default_mode="none")
    assert submit.mode == "none" and submit.options == inputs.Options()


def test_every_contract_key_is_read():
    raw = {
        "call_id": "call_1",
        "mode": "diagnose",
        "workflow": "explore_table",
        "resources": {"files": ["reports/a.csv"], "tables": ["sample.orders"]},
    }
    submit = parse(json.dumps(raw))
    assert submit.mode == "diagnose" and submit.options.call_id == "call_1"
    assert submit.options.workflow == "explore_table"
    assert submit.options.resources.files == ("reports/a.csv",)
    assert submit.options.resources.tables == ("sample.orders",)


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ('{"surprise": 1}', "surprise: unknown key"),
        ('{"resources": {"files": [], "urls": []}}', "resources.urls: unknown key"),
        ('{"mode": "yolo"}', "mode"),
        ('{"call_id": 7}', "call_id"),
        ("[1, 2]", "JSON object"),
        ("{not json", "JSON object"),
        ('"just a string"', "JSON object"),
    ],
)
def test_bad_options_are_invalid_input_with_a_clear_reason(raw, says):
    with pytest.raises(inputs.InputError) as caught:
        parse(raw)
    assert caught.value.code == "INVALID_INPUT" and says in caught.value.message


def test_an_unknown_key_over_the_real_route_is_invalid_input_and_calls_no_model(
    chat, tokens, conversation, fake_llm
):
    outputs = chat.send(tokens["admin"], conversation(), "hello", options='{"sneaky": true}')

    assert error_code(outputs) == "INVALID_INPUT"
    assert "sneaky" in outputs[-1][0]["metadata"]["message"]
    assert fake_llm.requests == []
