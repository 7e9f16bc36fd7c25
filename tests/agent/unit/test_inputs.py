"""What a submit carries, checked at the boundary (agent/inputs.py): every contract key of
`options` is read, an unknown key or a bad value is INVALID_INPUT with a clear reason, and the
message, conversation id, action and focus are checked before anything runs. No processes; the
same refusal over the real /chat route is in tests/agent/test_options.py."""

from __future__ import annotations

import json

import pytest

from agent import inputs

CID = "6f1c1f7e-8a0e-4a53-9d0b-8b9a4c1d2e3f"


def parse(options: object) -> inputs.Submit:
    return inputs.parse({"text": "hi", "files": []}, CID, "", "", options, max_chars=1000)


def refusal(*args: object, **kwargs: object) -> str:
    kwargs.setdefault("max_chars", 1000)
    with pytest.raises(inputs.InputError) as caught:
        inputs.parse(*args, **kwargs)  # type: ignore[arg-type]
    assert caught.value.code == "INVALID_INPUT"
    return caught.value.message


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
        ('{"call_id": ""}', "call_id"),
        ("[1, 2]", "JSON object"),
        ("{not json", "JSON object"),
        ('"just a string"', "JSON object"),
    ],
)
def test_bad_options_are_invalid_input_with_a_clear_reason(raw, says):
    with pytest.raises(inputs.InputError) as caught:
        parse(raw)
    assert caught.value.code == "INVALID_INPUT" and says in caught.value.message


def test_a_refusal_names_the_field_but_never_echoes_the_value_sent():
    message = refusal({"text": "hi"}, CID, "", "", '{"mode": "secret-value-123"}')
    assert "mode" in message and "secret-value-123" not in message


def test_too_many_resources_or_too_long_options_are_refused():
    many = json.dumps({"resources": {"files": [f"f{i}" for i in range(inputs.MAX_RESOURCES + 1)]}})
    assert "resources.files" in refusal({"text": "hi"}, CID, "", "", many)
    huge = json.dumps({"workflow": "w" * inputs.MAX_OPTIONS_CHARS})
    assert "at most" in refusal({"text": "hi"}, CID, "", "", huge)


def test_the_conversation_action_and_message_are_checked():
    assert "UUID" in refusal({"text": "hi"}, "not-a-uuid", "", "")
    assert "action" in refusal({"text": "hi"}, CID, "approve", "")
    assert "empty" in refusal({"text": "   "}, CID, "", "")
    assert "message" in refusal({"text": 5}, CID, "", "")
    # a decision needs no text; the id is normalised; a plain string is a message
    submit = inputs.parse(None, CID.upper(), " confirm ", "", max_chars=10)
    assert (submit.action, submit.conversation_id, submit.text) == ("confirm", CID, "")
    assert inputs.parse("hello", CID, None, None, max_chars=10).text == "hello"


def test_the_focus_is_a_small_json_object():
    submit = inputs.parse("hi", CID, "", '{"dashboard_id": 3}', max_chars=10)
    assert submit.focus == {"dashboard_id": 3}
    assert "JSON object" in refusal("hi", CID, "", "[3]")
    assert "JSON object" in refusal("hi", CID, "", "{bad")
    assert "2000" in refusal("hi", CID, "", json.dumps({"k": "v" * inputs.MAX_FOCUS_CHARS}))


def test_a_long_message_is_cut_at_a_sentence_end_and_marked():
    sentence = "The revenue chart shows a dip in March. "
    submit = inputs.parse(sentence * 40, CID, "", "", max_chars=500)

    assert submit.truncated and len(submit.text) <= 500
    assert submit.text.endswith("March. " + inputs.TRUNCATED_SUFFIX)
    assert not inputs.parse(sentence, CID, "", "", max_chars=500).truncated


def test_without_a_sentence_end_near_the_limit_the_cut_is_at_the_limit():
    text, truncated = inputs.truncate("x" * 1000, 100)
    assert truncated and len(text) <= 100 and text.endswith(inputs.TRUNCATED_SUFFIX)
    assert text.startswith("x" * 80)
