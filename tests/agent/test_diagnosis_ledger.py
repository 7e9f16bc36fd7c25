"""The pure parts of a diagnosis: the progress ledger's rules, the budget's checks and the
strict draft parser (bounds, unknown keys, citations)."""

from __future__ import annotations

import json

import pytest

from agent.diagnosis.budget import Budget, RunStopped
from agent.diagnosis.draft import DraftError, parse_draft
from agent.diagnosis.ledger import Ledger, PreviousObservation
from tests.agent._diagnosis import draft_of


def ledger(threshold: int = 2, violations: int = 3) -> Ledger:
    return Ledger(saturation_threshold=threshold, max_violations=violations)


def ran(book: Ledger, call_id: str, status: str = "OK") -> None:
    book.started(call_id, "query_logs", {"dashboard_id": 17})
    book.finished(call_id, status)  # type: ignore[arg-type]


def assess(call_id: str, assessment: str = "GAINED") -> PreviousObservation:
    return PreviousObservation(tool_call_id=call_id, assessment=assessment)  # type: ignore[arg-type]


def test_the_first_call_and_a_call_after_an_empty_or_failed_result_need_no_assessment():
    book = ledger()
    assert book.admit(None).runs
    ran(book, "a", "EMPTY")
    assert book.admit(None).runs
    ran(book, "b", "ERROR")
    assert book.admit(None).runs


def test_after_an_ok_result_only_its_exact_assessment_lets_the_next_call_run():
    book = ledger()
    ran(book, "a")
    missing, wrong = book.admit(None), book.admit(assess("zzz"))
    assert (missing.code, missing.expected) == ("INVALID_PROGRESS_PROTOCOL", "a")
    assert (wrong.code, wrong.expected) == ("INVALID_PROGRESS_PROTOCOL", "a")
    assert book.admit(assess("a", "GAINED")).runs
    assert book.checks["a"].assessment == "GAINED" and book.pending is None


def test_no_gain_in_a_row_stops_and_gained_resets_the_streak():
    book = ledger(threshold=2)
    ran(book, "a")
    assert book.admit(assess("a", "NO_GAIN")).runs
    ran(book, "b")
    assert book.admit(assess("b", "GAINED")).runs  # the streak starts over
    ran(book, "c")
    assert book.admit(assess("c", "NO_GAIN")).runs
    ran(book, "d", "EMPTY")  # nothing came back: a second no-gain
    assert book.admit(None).code == "STOP_REQUIRED" and book.stop == "NO_GAIN"
    assert book.admit(None).code == "STOP_REQUIRED"  # and it stays


def test_repeated_violations_stop_independently_of_no_gain():
    book = ledger(violations=2)
    ran(book, "a")
    assert book.admit(None).code == "INVALID_PROGRESS_PROTOCOL"
    assert book.admit(None, malformed=True).code == "STOP_REQUIRED"
    assert book.stop == "PROTOCOL_VIOLATED"


def test_only_calls_that_ran_are_citable_and_the_snapshot_bounds_their_scope():
    book = ledger()
    book.started("a", "execute_sql", {"datasource": "sample", "query": "SELECT " + "x" * 500})
    book.finished("a", "OK")
    assert book.citable() == {"a"}
    (shown,) = book.snapshot()
    assert len(shown["scope"]["query"]) == 200 and shown["evidence_status"] == "OK"


def test_the_budget_refuses_a_round_past_its_calls_or_tokens():
    calls = Budget(max_model_calls=1, max_tokens=100)
    calls.before_round()
    with pytest.raises(RunStopped) as stopped:
        calls.before_round()
    assert stopped.value.reason == "BUDGET_EXHAUSTED"
    tokens = Budget(max_model_calls=5, max_tokens=100, tokens=100)
    with pytest.raises(RunStopped, match="BUDGET_EXHAUSTED"):
        tokens.before_round()
    fresh = Budget(max_model_calls=5, max_tokens=100)
    fresh.before_round()
    assert fresh.model_calls == 1


def parse(text: str, citable: set[str] | None = None, max_bytes: int = 16_000):
    return parse_draft(text, citable=citable or {"a"}, max_bytes=max_bytes)


def test_a_bare_draft_parses_with_its_exact_call_ids():
    assert parse(json.dumps(draft_of("a"))).analysis[0].tool_call_ids == ["a"]
    assert parse("  \n" + json.dumps(draft_of()) + "\n").conclusion is None


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(extra="field"),
        lambda d: d["limitations"].update(note="x"),
        lambda d: d.update(conclusion={"summary": "x", "confidence": "certain"}),
        lambda d: d["analysis"][0].update(tool_call_ids=[]),  # SUPPORTED without a call
        lambda d: d["analysis"][0].update(tool_call_ids=["elsewhere"]),
        lambda d: d["analysis"][0].update(evidence_status="NEGATIVE_OBSERVATION"),  # no support
        lambda d: d.update(action_plan=["x" * 501]),
        lambda d: d.update(recommendations=["ok"] * 11),
        lambda d: d.pop("limitations"),
        lambda d: d.update(analysis="not a list"),
    ],
)
def test_a_draft_outside_the_schema_or_citing_badly_is_refused(change):
    draft = draft_of("a")
    change(draft)
    with pytest.raises(DraftError):
        parse(json.dumps(draft))


def test_an_oversized_or_non_object_answer_is_refused_by_utf8_bytes():
    text = json.dumps(draft_of("a"), ensure_ascii=False)
    with pytest.raises(DraftError):
        parse(text, max_bytes=len(text.encode()) - 1)
    assert parse(text, max_bytes=len(text.encode()))
    for bad in ("[]", '"draft"', "null", "{} {}", ""):
        with pytest.raises(DraftError):
            parse(bad)
