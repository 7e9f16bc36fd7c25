"""`options.mode = "diagnose"` over the real /chat route, the real backend and the scripted
LLM: one budgeted run, a strict draft, its input, its persistence and cancel.

The suite's agent runs with DIAGNOSIS__MAX_MODEL_CALLS=4 and DIAGNOSIS__MAX_QUERY_BYTES=300
(tests/agent/conftest.py).
"""

from __future__ import annotations

import json

import pytest

from tests.agent._diagnosis import (
    answer,
    audited,
    call,
    card,
    diagnose,
    diagnosis_of,
    draft_of,
    new_id,
    observation,
)
from tests.agent.support import (
    assert_valid_for_any_provider,
    error_code,
    history,
    kinds,
    wait_for,
)
from tests.agent.test_cancel import SLOW_SQL, wait_inactive

LOGS_17 = {"dashboard_id": 17, "level": "error"}
QUESTION = "Why is dashboard 17 failing?"


def test_a_tool_round_and_the_draft_round_are_two_calls_of_one_budget_and_the_draft_cites_the_call(
    chat, tokens, conversation, fake_llm, database_url
):
    logs = new_id("logs")
    fake_llm.enqueue(call("query_logs", LOGS_17, id=logs), answer(draft_of(logs)))

    outputs = diagnose(chat, tokens["viewer"], conversation("viewer"), QUESTION)

    final = outputs[-1]
    assert kinds(final) == ["tool_end", "diagnosis"]
    result = diagnosis_of(final)
    assert result["outcome"] == "draft"
    assert result["draft"]["analysis"][0]["tool_call_ids"] == [logs]
    assert result["draft"]["conclusion"]["confidence"] == "medium"
    assert result["progress"]["model_calls"] == 2 and len(fake_llm.requests) == 2
    assert result["progress"]["tokens"] > 0  # from the usage the scripted model reported
    (checked,) = result["progress"]["checked"]
    assert checked["tool_call_id"] == logs and checked["evidence_status"] == "OK"
    seen = observation(fake_llm.requests[1], logs)
    assert seen["evidence_status"] == "OK" and seen["tool_call_id"] == logs
    assert set(seen) == {"tool_call_id", "evidence_status", "entries", "matched"}
    assert {e["dashboard_id"] for e in seen["entries"]} == {17}
    assert audited(database_url, result["run_id"]) == [("logs.search", "success")]


def test_only_the_three_evidence_tools_are_offered_each_behind_the_envelope(
    chat, tokens, conversation, fake_llm
):
    fake_llm.enqueue(answer(draft_of()))

    diagnose(chat, tokens["viewer"], conversation("viewer"), QUESTION)

    (request,) = fake_llm.requests
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in request["tools"]}
    assert set(offered) == {"lookup_knowledge", "query_logs", "execute_sql"}
    for parameters in offered.values():
        assert set(parameters["properties"]) == {"previous_observation", "input"}
        assert parameters["required"] == ["input"]
    assert set(offered["execute_sql"]["properties"]["input"]["properties"]) == {
        "datasource",
        "query",
    }


def test_without_evidence_the_draft_has_no_conclusion_and_says_what_is_missing(
    chat, tokens, conversation, fake_llm
):
    no_target = draft_of()
    no_target["limitations"]["missing_info"] = ["Which dashboard is failing"]
    fake_llm.enqueue(answer(no_target))

    outputs = diagnose(chat, tokens["viewer"], conversation("viewer"), "Something is broken")

    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "draft" and result["draft"]["conclusion"] is None
    assert result["draft"]["limitations"]["missing_info"] == ["Which dashboard is failing"]
    assert result["progress"]["checked"] == []


def test_a_conclusion_without_supporting_evidence_is_refused_as_invalid_draft(
    chat, tokens, conversation, fake_llm
):
    fabricated = draft_of()
    fabricated["conclusion"] = {"summary": "The database is down", "confidence": "high"}
    fake_llm.enqueue(answer(fabricated))

    outputs = diagnose(chat, tokens["viewer"], conversation("viewer"), QUESTION)

    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "failed" and result["error"]["code"] == "INVALID_DRAFT"
    assert "draft" not in result


@pytest.mark.parametrize(
    "wrap",
    [
        lambda text: "Here is the diagnosis:\n" + text,
        lambda text: "```json\n" + text + "\n```",
        lambda text: text + "\nI hope this helps.",
        lambda text: text[:-1],
        lambda text: "",
    ],
    ids=["prose-before", "fence", "prose-after", "malformed", "empty"],
)
def test_anything_but_one_bare_draft_object_is_invalid_draft_after_exactly_one_model_call(
    chat, tokens, conversation, fake_llm, wrap
):
    fake_llm.enqueue({"text": wrap(json.dumps(draft_of()))})

    outputs = diagnose(chat, tokens["viewer"], conversation("viewer"), QUESTION)

    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "failed" and result["error"]["code"] == "INVALID_DRAFT"
    assert len(fake_llm.requests) == 1


def test_a_draft_citing_a_call_that_is_not_of_this_run_is_invalid_draft(
    chat, tokens, conversation, fake_llm
):
    cid = conversation("viewer")
    first = new_id("logs")
    fake_llm.enqueue(call("query_logs", LOGS_17, id=first), answer(draft_of(first)))
    assert diagnosis_of(diagnose(chat, tokens["viewer"], cid, QUESTION)[-1])["outcome"] == "draft"
    fake_llm.reset()
    fake_llm.enqueue(answer(draft_of(first)))  # the previous run's call, seen in previous_turn

    outputs = diagnose(chat, tokens["viewer"], cid, "And is it still failing now?")

    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "failed" and result["error"]["code"] == "INVALID_DRAFT"
    sent = json.loads(fake_llm.requests[0]["messages"][1]["content"])
    assert sent["previous_turn"]["query"] == QUESTION
    assert sent["previous_turn"]["draft"] == draft_of(first)


def test_the_budget_is_checked_before_every_model_round_and_runs_out_as_a_controlled_stop(
    chat, tokens, conversation, fake_llm, database_url
):
    a, b, c, d = (new_id(n) for n in "abcd")
    fake_llm.enqueue(
        call("query_logs", LOGS_17, id=a),
        call("lookup_knowledge", {"query": "no such column"}, id=b, previous=(a, "GAINED")),
        call(
            "execute_sql",
            {"datasource": "sample", "query": "SELECT 1"},
            id=c,
            previous=(b, "GAINED"),
        ),
        call("query_logs", {"dashboard_id": 17}, id=d, previous=(c, "GAINED")),
        answer(draft_of(a)),  # never asked for: the fifth round is over the budget of four
    )

    outputs = diagnose(chat, tokens["viewer"], conversation("viewer"), QUESTION)

    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "stopped" and result["stop_reason"] == "BUDGET_EXHAUSTED"
    assert len(fake_llm.requests) == 4 and result["progress"]["model_calls"] == 4
    assert [c["tool_call_id"] for c in result["progress"]["checked"]] == [a, b, c, d]
    assert "draft" not in result
    assert [action for action, _ in audited(database_url, result["run_id"])] == [
        "logs.search",
        "knowledge.search",
        "datasource.query",
        "logs.search",
    ]


def test_the_earlier_chat_turns_are_not_in_the_model_input_and_the_next_chat_turn_sees_the_outcome(
    chat, tokens, conversation, fake_llm
):
    cid = conversation("viewer")
    fake_llm.enqueue({"text": "Noted."})
    chat.send(tokens["viewer"], cid, "Remember the word BLUEBERRY for later")
    logs = new_id("logs")
    fake_llm.enqueue(call("query_logs", LOGS_17, id=logs), answer(draft_of(logs)))
    focus = json.dumps({"kind": "dashboard", "id": 17, "title": "Marketing funnel"})

    diagnose(chat, tokens["viewer"], cid, QUESTION, focus=focus)

    first = fake_llm.requests[1]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert "BLUEBERRY" not in json.dumps(first)
    sent = json.loads(first["messages"][1]["content"])
    assert sent == {
        "query": QUESTION,
        "focus": {"kind": "dashboard", "id": 17, "title": "Marketing funnel"},
        "previous_turn": None,
    }
    fake_llm.enqueue({"text": "As diagnosed above."})
    chat.send(tokens["viewer"], cid, "What did the diagnosis find?")
    followup = json.dumps(fake_llm.requests[-1]["messages"])
    assert QUESTION in followup and "Chart SQL selects a renamed column" in followup
    assert "BLUEBERRY" in followup  # the chat's own thread is untouched
    assert_valid_for_any_provider(fake_llm.requests[-1])


def test_a_diagnosis_supersedes_a_pending_confirmation_as_a_new_message_does(
    chat, tokens, conversation, fake_llm, api
):
    cid = conversation("admin")
    deploy = {"dashboard_id": 42, "ref": "main", "environment": "staging"}
    fake_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": deploy}]})
    assert kinds(chat.send(tokens["admin"], cid, "Deploy 42 to staging")[-1]) == [
        "confirm_required"
    ]
    fake_llm.enqueue(answer(draft_of()))

    diagnose(chat, tokens["admin"], cid, QUESTION)

    decision = [r for r in history(api, tokens["admin"], cid) if r["metadata"].get("type")]
    assert decision[0]["metadata"]["decision"] == "reject"
    assert decision[0]["metadata"]["reason"] == "superseded by a new message"
    fake_llm.enqueue({"text": "Nothing is pending."})
    chat.send(tokens["admin"], cid, "Is anything waiting?")
    assert_valid_for_any_provider(fake_llm.requests[-1])
    assert "REJECTED" in json.dumps(fake_llm.requests[-1]["messages"])


def test_the_turn_is_stored_like_any_other_with_the_diagnosis_in_its_parts(
    chat, tokens, conversation, fake_llm, api
):
    cid = conversation("viewer")
    logs = new_id("logs")
    fake_llm.enqueue(call("query_logs", LOGS_17, id=logs), answer(draft_of(logs)))

    outputs = diagnose(chat, tokens["viewer"], cid, QUESTION)

    question, turn = history(api, tokens["viewer"], cid)
    assert (question["role"], question["content"]) == ("user", QUESTION)
    assert question["metadata"] == {"mode": "diagnose"}
    assert turn["role"] == "assistant" and turn["metadata"]["mode"] == "diagnose"
    # the final value is the stored parts, each carrying the row's id (metadata.message_id)
    assert {m["metadata"].pop("message_id") for m in outputs[-1]} == {turn["id"]}
    assert turn["metadata"]["parts"] == outputs[-1]
    assert turn["metadata"]["diagnosis"]["query"] == QUESTION
    assert turn["content"].startswith("Diagnosis: Chart SQL selects a renamed column")


def test_an_over_long_query_is_refused_before_any_model_call_counting_utf8_bytes(
    chat, tokens, conversation, fake_llm, api
):
    cid = conversation("viewer")

    outputs = diagnose(chat, tokens["viewer"], cid, "ы" * 151)  # 151 letters, 302 bytes

    assert error_code(outputs) == "INVALID_INPUT"
    assert "300 bytes" in outputs[-1][0]["metadata"]["message"]
    assert fake_llm.requests == [] and history(api, tokens["viewer"], cid) == []
    fake_llm.enqueue(answer(draft_of()))
    accepted = diagnose(chat, tokens["viewer"], cid, "ы" * 150)  # exactly 300 bytes
    assert diagnosis_of(accepted[-1])["outcome"] == "draft"
    stored = history(api, tokens["viewer"], cid)[0]["content"]
    assert stored == "ы" * 150  # never cut


def test_a_diagnosis_takes_no_files_or_resources(chat, tokens, conversation, fake_llm):
    options = {"mode": "diagnose", "resources": {"tables": ["sample.orders"]}}
    outputs = chat.send(tokens["viewer"], conversation("viewer"), QUESTION, options=options)

    assert error_code(outputs) == "INVALID_INPUT"
    assert fake_llm.requests == []


def test_cancel_mid_run_stores_a_cancelled_outcome_with_the_partial_progress(
    chat, tokens, conversation, fake_llm, api, database_url
):
    cid = conversation("viewer")
    logs, slow = new_id("logs"), new_id("slow")
    fake_llm.enqueue(
        call("query_logs", LOGS_17, id=logs),
        call(
            "execute_sql",
            {"datasource": "sample", "query": SLOW_SQL},
            id=slow,
            previous=(logs, "GAINED"),
        ),
    )
    job = chat.submit(tokens["viewer"], cid, QUESTION, options={"mode": "diagnose"})
    wait_for(job, lambda m: any(x["metadata"].get("call_id") == slow for x in m))

    job.cancel()

    wait_inactive(api, tokens["viewer"], cid)
    parts = history(api, tokens["viewer"], cid)[-1]["metadata"]["parts"]
    result = diagnosis_of(parts)
    assert result["outcome"] == "stopped" and result["stop_reason"] == "CANCELLED"
    assert [(c["tool_call_id"], c["evidence_status"]) for c in result["progress"]["checked"]] == [
        (logs, "OK"),
        (slow, None),
    ]
    assert card(parts, slow)["type"] == "tool_error"
    assert card(parts, slow)["error"]["code"] == "CANCELLED"
    assert ("logs.search", "success") in audited(database_url, result["run_id"])
