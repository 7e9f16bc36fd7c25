"""Scoring: tools compared as a set (repeats do not matter, every tool does), a turn that did
not finish fails, and both reports say the same."""

from __future__ import annotations

from agent.evaluation import report
from agent.evaluation.cases import Case, NumberedCase
from agent.evaluation.runner import CaseOutcome


def outcome(expected: list[str], called: list[str], *, lang: str = "en", **kw: str) -> CaseOutcome:
    case = Case.model_validate({"query": "q", "expected_tools": expected, "lang": lang})
    return CaseOutcome(NumberedCase("cases.jsonl", 1, case), tuple(called), **kw)  # type: ignore[arg-type]


def test_the_same_tool_twice_is_still_exactly_the_expected_set() -> None:
    assert outcome(["dashboard_health"], ["dashboard_health", "dashboard_health"]).passed
    assert outcome(
        ["search_dashboards", "get_dashboard"], ["get_dashboard", "search_dashboards"]
    ).passed
    assert outcome([], []).passed


def test_a_missing_or_extra_tool_or_an_unfinished_turn_fails() -> None:
    assert not outcome(["get_dashboard"], []).passed
    assert not outcome(["get_dashboard"], ["get_dashboard", "query_logs"]).passed
    assert not outcome(["get_dashboard", "query_logs"], ["get_dashboard"]).passed
    assert not outcome(["get_dashboard"], ["get_dashboard"], error="DEADLINE: late").passed


def test_the_summary_counts_by_language_and_lists_only_failures() -> None:
    outcomes = [
        outcome(["get_dashboard"], ["get_dashboard"], lang="ru"),
        outcome(["get_dashboard"], ["dashboard_health"], lang="ru"),
        outcome([], [], lang="en"),
    ]

    summary = report.summary(outcomes)

    assert (summary["passed"], summary["total"], summary["accuracy"]) == (2, 3, 0.6667)
    assert summary["by_lang"]["ru"] == {"passed": 1, "total": 2, "accuracy": 0.5}
    assert [f["called_tools"] for f in summary["failures"]] == [["dashboard_health"]]
    assert report.text(outcomes).splitlines()[-1] == "tool selection: 2/3 (66.7%)"
