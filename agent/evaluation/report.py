"""The result of an evaluation: the score, overall and by language, and what each failed case
did instead. Text: one line per failed case, then `tool selection: P/N (X.X%)`. JSON: one
object `{passed, total, accuracy, by_lang, failures}`; `accuracy` is a fraction (0..1)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agent.evaluation.runner import CaseOutcome

MAX_QUERY_CHARS = 120


def _score(outcomes: Sequence[CaseOutcome]) -> dict[str, Any]:
    passed = sum(o.passed for o in outcomes)
    total = len(outcomes)
    return {"passed": passed, "total": total, "accuracy": round(passed / total, 4)}


def summary(outcomes: Sequence[CaseOutcome]) -> dict[str, Any]:
    """The JSON report (CONTRACT.md): overall score, score per language, failed cases."""
    langs = sorted({o.numbered.case.lang for o in outcomes})
    return {
        **_score(outcomes),
        "by_lang": {
            lang: _score([o for o in outcomes if o.numbered.case.lang == lang]) for lang in langs
        },
        "failures": [_failure(o) for o in outcomes if not o.passed],
    }


def _failure(outcome: CaseOutcome) -> dict[str, Any]:
    case = outcome.numbered.case
    return {
        "line": outcome.numbered.line,
        "lang": case.lang,
        "query": case.query,
        "expected_tools": sorted(case.expected_tools),
        "called_tools": list(outcome.called),
        "confirm_tools": list(outcome.confirm),
        "error": outcome.error,
    }


def _tools(names: Sequence[str]) -> str:
    return "[" + ", ".join(names) + "]"


def failure_line(outcome: CaseOutcome) -> str:
    """One failed case on one line: where, what was asked, expected and got."""
    case = outcome.numbered.case
    query = " ".join(case.query.split())
    if len(query) > MAX_QUERY_CHARS:
        query = query[: MAX_QUERY_CHARS - 1] + "…"
    got = _tools(outcome.called)
    if outcome.confirm:
        got += f" (confirmation asked for {', '.join(outcome.confirm)})"
    if outcome.error:
        got += f" ({outcome.error})"
    expected = _tools(sorted(case.expected_tools))
    return (
        f"FAIL {outcome.numbered.where} [{case.lang}] {json.dumps(query, ensure_ascii=False)}: "
        f"expected {expected}, got {got}"
    )


def percent(score: dict[str, Any]) -> str:
    return f"{score['passed']}/{score['total']} ({100 * score['passed'] / score['total']:.1f}%)"


def text(outcomes: Sequence[CaseOutcome]) -> str:
    """The text report: the failed cases in file order, then the overall score, last."""
    lines = [failure_line(o) for o in outcomes if not o.passed]
    lines.append(f"tool selection: {percent(_score(outcomes))}")
    return "\n".join(lines)


def by_lang_line(outcomes: Sequence[CaseOutcome]) -> str:
    """`en 50/60 (83.3%), ru ...` for the progress stream."""
    report = summary(outcomes)["by_lang"]
    return ", ".join(f"{lang} {percent(score)}" for lang, score in report.items())
