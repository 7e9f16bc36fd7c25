"""The bounds and the scrub pass of a debug record, on the real demo model's calls: long
strings cut with a marker, at most 50 calls a turn, a record shrunk below its byte budget, and
secrets (configured values, JWT-shaped strings, credential fields) removed."""

from __future__ import annotations

import asyncio
import json

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from agent.debug import recorder as rec
from agent.debug.recorder import CallRecorder
from agent.debug.scrub import Scrubber
from agent.demo.model import DemoChatModel

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXZhbHVl"


def calls(recorder: CallRecorder, *conversations: list, model: DemoChatModel | None = None) -> None:
    async def run() -> None:
        for messages in conversations:
            await (model or DemoChatModel()).ainvoke(messages, config={"callbacks": [recorder]})

    asyncio.run(run())


def test_a_long_message_is_cut_with_a_marker_saying_how_much():
    recorder = CallRecorder()
    # No tools bound: the unrouted message gets the help as text (not the help's search first).
    calls(
        recorder,
        [SystemMessage("s"), HumanMessage("x" * 20_000)],
        model=DemoChatModel(tool_names=()),
    )

    (call,) = recorder.record(Scrubber([]))["calls"]

    sent = call["request"]["messages"][-1]["content"]
    assert sent == "x" * 8_000 + "… [cut: 12,000 more characters]"
    assert call["request"]["model"] == "agent-chat-demo" and call["response"]["content"]


def test_a_turn_keeps_50_calls_and_counts_the_others():
    recorder = CallRecorder()
    calls(recorder, *([[HumanMessage("hello")]] * 53))

    record = recorder.record(Scrubber([]))

    assert len(record["calls"]) == 50 and record["dropped_calls"] == 3


def test_a_call_keeps_its_first_and_last_messages_and_a_large_record_is_shrunk():
    recorder = CallRecorder()
    history = [SystemMessage("system")]
    for i in range(80):
        history += [HumanMessage(f"q{i} " + "y" * 7_000), AIMessage(f"a{i}")]
    questions = [f"question {n}" for n in range(8)]  # 8 calls of ~210 KB: over 1.5 MB
    calls(recorder, *([*history, HumanMessage(q)] for q in questions))

    record = recorder.record(Scrubber([]))

    requests = [c["request"] for c in record["calls"]]
    assert len(json.dumps(record).encode()) <= rec.MAX_RECORD_BYTES
    assert record["dropped_calls"] == 0
    for request, question in zip(requests, questions, strict=True):
        assert request["messages"][0] == {"role": "system", "content": "system"}
        assert request["messages"][-1] == {"role": "user", "content": question}
        assert len(request["messages"]) + request["omitted_messages"] == len(history) + 1
    sizes = [len(r["messages"]) for r in requests]
    assert sizes[0] == rec.SHRUNK_TAIL + 1 and sizes[-1] == rec.MAX_MESSAGES  # shrunk in order
    assert set(sizes) == {rec.SHRUNK_TAIL + 1, rec.MAX_MESSAGES}


def test_secrets_and_credential_shapes_are_removed():
    scrub = Scrubber(["the-llm-api-key-value", "short", None])

    cleaned = scrub(
        {
            "messages": [{"role": "user", "content": f"key the-llm-api-key-value jwt {JWT}"}],
            "params": {"api_key": "anything", "headers": {"X": "y"}, "temperature": 0.2},
            "note": "Authorization: Bearer abcdefgh12345678 and sk-abcdefghijklmnop1234",
            "usage": {"input_tokens": 3, "total_tokens": 4},
        }
    )

    text = json.dumps(cleaned)
    for secret in ("the-llm-api-key-value", JWT, "abcdefgh12345678", "sk-abcdef", "anything"):
        assert secret not in text
    assert cleaned["params"]["temperature"] == 0.2
    assert cleaned["usage"] == {"input_tokens": 3, "total_tokens": 4}  # not a credential field
    assert cleaned["messages"][0]["content"] == "key [redacted] jwt [redacted]"


TRICKY = [
    {"content": "ordinary words about dashboards and tasks"},
    {"content": "line one\nBearer abcdefgh12345678"},  # the shape right after an escape
    {"content": "«ключ» the-llm-api-key-value"},  # after non-ASCII text
    {"content": 'a "quoted" sec"ret-value!'},  # a secret with characters JSON escapes
    {"content": "новый секрет-ключ-значение"},  # a non-ASCII secret
    {"content": f"(jwt:{JWT})"},
    {"content": "key:sk-abcdefghijklmnop1234"},
    {"Password": "plain", "n": 1},  # a credential field, any case
    {7: "a non-string key", "start": "2026-12-03"},
]


def test_a_dump_that_shows_nothing_to_scrub_means_scrubbing_changes_nothing():
    scrub = Scrubber(["the-llm-api-key-value", 'sec"ret-value!', "секрет-ключ-значение"])
    skipped = []
    for value in TRICKY:
        dumped = json.dumps([value], default=str)
        if scrub.finds_nothing_in(dumped):
            skipped.append(value)
            assert json.dumps(scrub([value]), default=str) == dumped, value  # what is sent
        else:
            assert json.dumps(scrub([value]), default=str) != dumped, value  # no false alarm here
    assert skipped == [TRICKY[0], TRICKY[-1]]  # every secret and shape above is walked


def test_a_recorded_secret_is_scrubbed_and_a_clean_record_is_sent_as_recorded():
    recorder = CallRecorder()
    calls(recorder, [HumanMessage("my token is the-user-token-value, keep it")])
    calls(recorder, [HumanMessage("nothing secret here")])
    scrub = Scrubber(["the-user-token-value"])

    leaked, clean = recorder.record(scrub)["calls"]

    assert "the-user-token-value" not in json.dumps(leaked)
    assert leaked["request"]["messages"][-1]["content"] == "my token is [redacted], keep it"
    assert clean["request"]["messages"][-1]["content"] == "nothing secret here"
    assert recorder.record(Scrubber([]))["calls"][0]["request"]["messages"][-1]["content"] == (
        "my token is the-user-token-value, keep it"  # the recorder's own copy is untouched
    )
