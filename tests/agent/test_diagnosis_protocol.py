"""The diagnosis progress protocol and observations over the real /chat route: repairs that do
not run the business tool (the backend's audit shows no call), NO_GAIN saturation, the model
that ignores STOP_REQUIRED, stable error codes, and tools that are not there."""

from __future__ import annotations

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

LOGS_17 = {"dashboard_id": 17, "level": "error"}
QUESTION = "Why is dashboard 17 failing?"
KNOWLEDGE = {"query": "no such column campaign_id"}


@pytest.mark.parametrize(
    "previous",
    [None, ("call_someone_else", "GAINED"), ("SAME", "MAYBE")],
    ids=["missing", "another-call", "bad-assessment"],
)
def test_a_call_that_does_not_assess_the_previous_result_gets_a_repair_and_does_not_run(
    chat, tokens, conversation, fake_llm, database_url, previous
):
    logs, lookup, again = new_id("logs"), new_id("lookup"), new_id("again")
    if previous and previous[0] == "SAME":
        previous = (logs, previous[1])
    fake_llm.enqueue(
        call("query_logs", LOGS_17, id=logs),
        call("lookup_knowledge", KNOWLEDGE, id=lookup, previous=previous),
        call("lookup_knowledge", KNOWLEDGE, id=again, previous=(logs, "GAINED")),
        answer(draft_of(logs, again)),
    )

    outputs = diagnose(chat, tokens["viewer"], conversation("viewer"), QUESTION)

    repair = observation(fake_llm.requests[2], lookup)
    assert repair["evidence_status"] == "ERROR"
    assert repair["code"] == "INVALID_PROGRESS_PROTOCOL"
    assert repair["expected_tool_call_id"] == logs
    assert set(repair) == {
        "tool_call_id",
        "evidence_status",
        "code",
        "message",
        "expected_tool_call_id",
    }
    assert card(outputs[-1], lookup)["error"]["code"] == "INVALID_PROGRESS_PROTOCOL"
    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "draft"
    assert [c["tool_call_id"] for c in result["progress"]["checked"]] == [logs, again]
    assert result["progress"]["checked"][0]["assessment"] == "GAINED"
    assert audited(database_url, result["run_id"]) == [
        ("logs.search", "success"),
        ("knowledge.search", "success"),  # the corrected call only
    ]


def test_no_gain_in_a_row_yields_stop_required_and_the_tool_does_not_run(
    chat, tokens, conversation, fake_llm, database_url
):
    logs, lookup, sql = new_id("logs"), new_id("lookup"), new_id("sql")
    fake_llm.enqueue(
        call("query_logs", LOGS_17, id=logs),
        call("lookup_knowledge", KNOWLEDGE, id=lookup, previous=(logs, "NO_GAIN")),
        call(
            "execute_sql",
            {"datasource": "sample", "query": "SELECT 1"},
            id=sql,
            previous=(lookup, "NO_GAIN"),
        ),
        answer(draft_of(logs, conclusion=None)),
    )

    outputs = diagnose(chat, tokens["viewer"], conversation("viewer"), QUESTION)

    stop = observation(fake_llm.requests[3], sql)
    assert stop["code"] == "STOP_REQUIRED" and stop["evidence_status"] == "ERROR"
    assert set(stop) == {"tool_call_id", "evidence_status", "code", "message"}
    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "draft" and result["progress"]["stop_required"] == "NO_GAIN"
    actions = [action for action, _ in audited(database_url, result["run_id"])]
    assert actions == ["logs.search", "knowledge.search"]  # no datasource.query


def test_a_model_that_ignores_stop_required_is_stopped_as_saturated(
    chat, tokens, conversation, fake_llm, database_url
):
    logs, lookup, sql, more = (new_id(n) for n in ("logs", "lookup", "sql", "more"))
    fake_llm.enqueue(
        call("query_logs", LOGS_17, id=logs),
        call("lookup_knowledge", KNOWLEDGE, id=lookup, previous=(logs, "NO_GAIN")),
        call(
            "execute_sql",
            {"datasource": "sample", "query": "SELECT 1"},
            id=sql,
            previous=(lookup, "NO_GAIN"),
        ),
        call("query_logs", {"dashboard_id": 17}, id=more),
    )

    outputs = diagnose(chat, tokens["viewer"], conversation("viewer"), QUESTION)

    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "stopped" and result["stop_reason"] == "SATURATED"
    assert "draft" not in result and len(fake_llm.requests) == 4
    assert [c["tool_call_id"] for c in result["progress"]["checked"]] == [logs, lookup]
    assert not [m for m in outputs[-1] if m["metadata"].get("call_id") == more]
    assert len(audited(database_url, result["run_id"])) == 2


def test_repeated_protocol_violations_yield_stop_required(
    chat, tokens, conversation, fake_llm, database_url
):
    logs, bad, worse = new_id("logs"), new_id("bad"), new_id("worse")
    fake_llm.enqueue(
        call("query_logs", LOGS_17, id=logs),
        call("lookup_knowledge", KNOWLEDGE, id=bad),
        call("lookup_knowledge", KNOWLEDGE, id=worse),  # DIAGNOSIS__MAX_PROTOCOL_VIOLATIONS=2
        answer(draft_of(logs)),
    )

    outputs = diagnose(chat, tokens["viewer"], conversation("viewer"), QUESTION)

    assert observation(fake_llm.requests[2], bad)["code"] == "INVALID_PROGRESS_PROTOCOL"
    assert observation(fake_llm.requests[3], worse)["code"] == "STOP_REQUIRED"
    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "draft"
    assert result["progress"]["stop_required"] == "PROTOCOL_VIOLATED"
    assert audited(database_url, result["run_id"]) == [("logs.search", "success")]


def test_a_tool_error_is_an_error_observation_with_a_stable_code_and_nothing_raw(
    chat, tokens, conversation, fake_llm, database_url
):
    sql = new_id("sql")
    refused = draft_of(conclusion=None)
    refused["analysis"] = [
        {
            "finding": "The query was refused",
            "evidence_status": "NEGATIVE_OBSERVATION",
            "tool_call_ids": [sql],
        }
    ]
    fake_llm.enqueue(
        call("execute_sql", {"datasource": "sample", "query": "DELETE FROM orders"}, id=sql),
        answer(refused),
    )

    outputs = diagnose(chat, tokens["viewer"], conversation("viewer"), QUESTION)

    seen = observation(fake_llm.requests[1], sql)
    assert seen == {
        "tool_call_id": sql,
        "evidence_status": "ERROR",
        "code": "SQL_REJECTED",
        "message": "Refused: only one read-only SELECT statement is allowed.",
    }
    assert card(outputs[-1], sql)["error"]["code"] == "SQL_REJECTED"
    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "draft"
    assert result["progress"]["checked"][0]["evidence_status"] == "ERROR"
    assert audited(database_url, result["run_id"]) == [("datasource.query", "failure")]


def test_an_unknown_tool_is_not_emulated(chat, tokens, conversation, fake_llm, database_url):
    deploy = new_id("deploy")
    fake_llm.enqueue(
        {"tool_calls": [{"id": deploy, "name": "deploy_dashboard", "args": {"dashboard_id": 17}}]},
        answer(draft_of()),
    )

    outputs = diagnose(chat, tokens["admin"], conversation("admin"), QUESTION)

    assert observation(fake_llm.requests[1], deploy)["code"] == "UNKNOWN_TOOL"
    result = diagnosis_of(outputs[-1])
    assert result["progress"]["checked"] == []
    assert audited(database_url, result["run_id"]) == []


def test_only_the_first_of_several_calls_in_one_round_runs(
    chat, tokens, conversation, fake_llm, database_url
):
    first, second = new_id("first"), new_id("second")
    both = {
        "tool_calls": [
            {"id": first, "name": "query_logs", "args": {"input": LOGS_17}},
            {"id": second, "name": "lookup_knowledge", "args": {"input": KNOWLEDGE}},
        ]
    }
    fake_llm.enqueue(both, answer(draft_of(first)))

    outputs = diagnose(chat, tokens["viewer"], conversation("viewer"), QUESTION)

    assert observation(fake_llm.requests[1], second)["code"] == "ONE_CALL_PER_ROUND"
    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "draft"
    assert audited(database_url, result["run_id"]) == [("logs.search", "success")]
