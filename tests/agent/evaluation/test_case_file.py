# ruff: noqa: RUF001  (Russian text is intended)
"""The case file: a bad one is refused before anything runs (exit status 2, the line named),
and the project's own file is what the issue asks for: balanced, covering every tool."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import httpx
import pytest

from agent.backend_client import BackendClient
from agent.config import Settings
from agent.evaluation.cases import CaseFileError, load_cases
from agent.tools.names import CONFIRM_TOOLS, TOOL_NAMES
from agent.tools.registry import build_tools
from agent_chat.evaluate import DEFAULT_CASES
from tests.agent.evaluation.support import run_eval, write_cases

GOOD = {"query": "show dashboard 42", "expected_tools": ["get_dashboard"], "lang": "en"}

BAD_LINES = [
    ('{"query": "hi", "expected_tools": [', "not valid JSON"),
    ({**GOOD, "note": "x"}, "unknown field 'note'"),
    ({**GOOD, "lang": "de"}, 'lang must be "ru" or "en"'),
    ({"expected_tools": [], "lang": "en"}, "missing field 'query'"),
    ({**GOOD, "query": "   "}, "query: must not be blank"),
    ({**GOOD, "expected_tools": ["delete_dashboard"]}, "unknown tool 'delete_dashboard'"),
    ({**GOOD, "expected_tools": ["get_dashboard", "get_dashboard"]}, "listed twice"),
    ({**GOOD, "focus": {"id": 42}}, 'focus: needs a "kind"'),
    ({**GOOD, "history": [{"role": "system", "content": "x"}]}, "history.0.role"),
    ("[1, 2]", "must be a JSON object"),
]


@pytest.mark.parametrize(("line", "problem"), BAD_LINES)
def test_a_bad_line_is_refused_with_its_number_and_the_reason(
    tmp_path: Path, line: object, problem: str
) -> None:
    path = write_cases(tmp_path / "cases.jsonl", [GOOD, "", line])  # type: ignore[list-item]

    with pytest.raises(CaseFileError) as error:
        load_cases(path)

    assert str(error.value).startswith(f"{path}:3: ") and problem in str(error.value)


@pytest.mark.parametrize(("line", "problem"), BAD_LINES[:4])
def test_the_command_exits_with_status_2_on_a_bad_case_file_before_running_anything(
    tmp_path: Path, line: object, problem: str
) -> None:
    path = write_cases(tmp_path / "cases.jsonl", [GOOD, line])  # type: ignore[list-item]

    # Nothing is listening at BACKEND_URL: the file is refused before any connection.
    result = run_eval(["--cases", str(path)], {"BACKEND_URL": "http://127.0.0.1:9"})

    assert result.returncode == 2 and result.stdout == ""
    assert f"agent-chat eval: {path}:2: " in result.stderr and problem in result.stderr


def test_an_empty_or_missing_case_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(CaseFileError, match="no cases"):
        load_cases(empty)
    with pytest.raises(CaseFileError, match="cannot read"):
        load_cases(tmp_path / "absent.jsonl")


def test_a_good_file_keeps_focus_history_and_line_numbers(tmp_path: Path) -> None:
    follow = {
        "query": "деплой его",
        "expected_tools": ["deploy_dashboard"],
        "lang": "ru",
        "focus": {"kind": "dashboard", "id": 17},
        "history": [{"role": "user", "content": "дашборд 17"}],
    }
    path = write_cases(tmp_path / "cases.jsonl", [GOOD, "  ", follow])

    first, second = load_cases(path)

    assert (first.line, second.line, second.where) == (1, 3, f"{path}:3")
    assert second.case.focus == {"kind": "dashboard", "id": 17}
    assert [(t.role, t.content) for t in second.case.history] == [("user", "дашборд 17")]


async def test_the_case_files_tools_are_exactly_the_tools_the_agent_builds() -> None:
    client = BackendClient(Settings(), http=httpx.AsyncClient())
    try:
        assert sorted(t.name for t in build_tools(client)) == sorted(TOOL_NAMES)
    finally:
        await client.aclose()


def test_the_projects_case_file_is_bilingual_and_covers_every_kind_of_request() -> None:
    cases = [c.case for c in load_cases(DEFAULT_CASES)]
    langs = Counter(c.lang for c in cases)

    assert len(cases) >= 120 and langs["ru"] == langs["en"]
    for case in cases:  # the lang field says what the query is written in
        cyrillic = re.search(r"[а-яё]", case.query.lower()) is not None
        assert cyrillic == (case.lang == "ru"), case.query
    assert {t for c in cases for t in c.expected_tools} == set(TOOL_NAMES)
    for lang in ("ru", "en"):
        mine = [c for c in cases if c.lang == lang]
        assert sum(len(c.expected_tools) > 1 for c in mine) >= 5  # multi-tool requests
        assert sum(c.focus is not None for c in mine) >= 4  # "this dashboard", "него"
        assert sum(bool(c.history) for c in mine) >= 4  # follow-ups
        assert sum(not c.expected_tools for c in mine) >= 8  # no tool, or refused
        assert sum(bool(set(c.expected_tools) & set(CONFIRM_TOOLS)) for c in mine) >= 8
    queries = [c.query for c in cases]
    assert len(set(queries)) == len(queries), "a query appears twice"
    json.dumps([c.model_dump() for c in cases])  # every case is plain JSON again
