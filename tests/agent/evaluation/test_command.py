"""`agent-chat eval` end to end: a real subprocess, the real backend over HTTP, and the scripted
OpenAI-compatible LLM choosing the tools; the score, both reports, and a platform left as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.agent.evaluation.support import run_eval, write_cases
from tests.fakes.llm_server import FakeLLM
from tests.support.processes import free_port

DEPLOY = {"dashboard_id": 42, "ref": "main", "environment": "production"}

# One case of each kind; the marker word picks the scripted model's answer for that case.
SMALL: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (  # the right tool: passes
        {"query": "alpha: show dashboard 42", "expected_tools": ["get_dashboard"], "lang": "en"},
        {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}]},
    ),
    (  # a wrong tool
        {"query": "bravo: почему 17 падает?", "expected_tools": ["dashboard_health"], "lang": "ru"},
        {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 17}}]},
    ),
    (  # a missing tool
        {
            "query": "charlie: columns of sample.orders, then count the rows",
            "expected_tools": ["get_table_schema", "execute_sql"],
            "lang": "en",
        },
        {"tool_calls": [{"name": "get_table_schema", "args": {"table_ref": "sample.orders"}}]},
    ),
    (  # an extra tool (two calls in one answer)
        {"query": "delta: дашборды продаж", "expected_tools": ["search_dashboards"], "lang": "ru"},
        {
            "tool_calls": [
                {"name": "search_dashboards", "args": {"query": "sales"}},
                {"name": "query_logs", "args": {"level": "error"}},
            ]
        },
    ),
    (  # a confirmation: counts as chosen, passes, never runs
        {"query": "echo: deploy 42 to prod", "expected_tools": ["deploy_dashboard"], "lang": "en"},
        {"text": "Deploying.", "tool_calls": [{"name": "deploy_dashboard", "args": DEPLOY}]},
    ),
    (  # the model fails (500 twice): a failure with the reason, not a crash
        {"query": "foxtrot: дашборд 23 ок?", "expected_tools": ["dashboard_health"], "lang": "ru"},
        {"status": 500},
    ),
]
LLM_ERROR = "LLM_ERROR: The language model answered with an error (HTTP 500)."


@pytest.fixture()
def small_file(tmp_path: Path, fake_llm: FakeLLM) -> Path:
    for case, response in SMALL:
        fake_llm.add_rule(case["query"].split(":")[0] + ":", response)
    return write_cases(tmp_path / "small.jsonl", [case for case, _ in SMALL])


def test_the_text_report_lists_each_failed_case_and_ends_with_the_exact_score(
    small_file: Path, agent_env: dict[str, str]
) -> None:
    result = run_eval(["--cases", str(small_file), "--fail-under", "50"], agent_env)

    assert result.returncode == 1, result.stderr  # 33.3% is under --fail-under 50
    lines = result.stdout.splitlines()
    where = f"FAIL {small_file}"
    assert lines == [
        f'{where}:2 [ru] "bravo: почему 17 падает?": '
        "expected [dashboard_health], got [get_dashboard]",
        f'{where}:3 [en] "charlie: columns of sample.orders, then count the rows": '
        "expected [execute_sql, get_table_schema], got [get_table_schema]",
        f'{where}:4 [ru] "delta: дашборды продаж": '
        "expected [search_dashboards], got [search_dashboards, query_logs]",
        f'{where}:6 [ru] "foxtrot: дашборд 23 ок?": '
        f"expected [dashboard_health], got [] ({LLM_ERROR})",
        "tool selection: 2/6 (33.3%)",
    ]
    assert "by language: en 2/3 (66.7%), ru 0/3 (0.0%)" in result.stderr
    assert "6/6" in result.stderr  # the progress bar went to stderr


def test_json_is_one_object_with_the_score_by_language_and_each_failure(
    small_file: Path, agent_env: dict[str, str], fake_llm: FakeLLM
) -> None:
    result = run_eval(["--cases", str(small_file), "--json"], agent_env)

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # all of stdout: progress went to stderr
    assert set(report) == {"passed", "total", "accuracy", "by_lang", "failures"}
    assert (report["passed"], report["total"], report["accuracy"]) == (2, 6, 0.3333)
    assert report["by_lang"] == {
        "en": {"passed": 2, "total": 3, "accuracy": 0.6667},
        "ru": {"passed": 0, "total": 3, "accuracy": 0.0},
    }
    failures = {f["line"]: f for f in report["failures"]}
    assert sorted(failures) == [2, 3, 4, 6]
    assert failures[2] == {
        "line": 2,
        "lang": "ru",
        "query": "bravo: почему 17 падает?",
        "expected_tools": ["dashboard_health"],
        "called_tools": ["get_dashboard"],
        "confirm_tools": [],
        "error": None,
    }
    assert failures[4]["called_tools"] == ["search_dashboards", "query_logs"]
    assert failures[6]["called_tools"] == [] and failures[6]["error"] == LLM_ERROR
    # Each case is a fresh conversation: one question, no earlier turn, the real tools offered.
    first = next(r for r in fake_llm.requests if "alpha:" in json.dumps(r["messages"]))
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert "The person's roles: admin" in first["messages"][0]["content"]
    assert len(first["tools"]) == 14
    # The confirmation ended its case: no model call after the deploy was proposed.
    echo = [r for r in fake_llm.requests if "echo:" in json.dumps(r["messages"])]
    assert len(echo) == 1


def _one(sql: psycopg.Connection[Any], query: str) -> Any:
    return sql.execute(query).fetchone()


def _state(sql: psycopg.Connection[Any]) -> dict[str, Any]:
    """What an evaluation must not change: rows and max ids of every table a write touches."""
    tables = ("dashboard_deployments", "dashboard_branches", "dashboard_versions")
    state: dict[str, Any] = {
        t: _one(sql, f"select count(*), coalesce(max(id), 0) from {t}")
        for t in (*tables, "datasource_migrations")
    }
    state["environments"] = sql.execute(
        "select dashboard_id, environment, version_id from dashboard_environments order by 1, 2"
    ).fetchall()
    state["conversations"] = _one(sql, "select count(*) from agent_conversations")
    state["messages"] = _one(sql, "select count(*) from agent_messages")
    state["audit"] = _one(
        sql,
        "select count(*), coalesce(max(id), 0) from assistant_audit"
        " where action not in ('auth.login', 'auth.service_token')",
    )
    return state


def test_an_eval_never_runs_a_dangerous_tool_nor_creates_a_branch(
    tmp_path: Path, agent_env: dict[str, str], fake_llm: FakeLLM, sql: psycopg.Connection[Any]
) -> None:
    migration = {"datasource": "sample", "migration_id": "20261101_inventory_snapshots"}
    commit = {"branch_id": 1, "message": "eval", "changes": [{"op": "remove", "key": "x"}]}
    branch = {"dashboard_id": 42, "name": "eval-juliet"}
    fake_llm.add_rule("golf:", {"tool_calls": [{"name": "deploy_dashboard", "args": DEPLOY}]})
    fake_llm.add_rule("hotel:", {"tool_calls": [{"name": "execute_migration", "args": migration}]})
    fake_llm.add_rule("india:", {"tool_calls": [{"name": "commit_changes", "args": commit}]})
    fake_llm.add_rule("juliet:", {"tool_calls": [{"name": "create_branch", "args": branch}]})
    # After the (synthetic) branch result, the model commits to it: that asks to confirm.
    follow = {**commit, "branch_id": 900_001}
    fake_llm.add_rule(
        '"eval-juliet"', {"tool_calls": [{"name": "commit_changes", "args": follow}]}, on="tool"
    )
    fake_llm.add_rule(
        "kilo:",
        {
            "tool_calls": [
                {"name": "get_dashboard", "args": {"dashboard_id": 42}},
                {"name": "deploy_dashboard", "args": {**DEPLOY, "environment": "staging"}},
            ]
        },
    )
    cases = [
        {"query": "golf: deploy 42 to prod", "expected_tools": ["deploy_dashboard"], "lang": "en"},
        {"query": "hotel: примени миграцию", "expected_tools": ["execute_migration"], "lang": "ru"},
        {"query": "india: commit", "expected_tools": ["commit_changes"], "lang": "en"},
        {
            "query": "juliet: создай ветку и закоммить",
            "expected_tools": ["create_branch", "commit_changes"],
            "lang": "ru",
        },
        {
            "query": "kilo: show 42 and deploy it",
            "expected_tools": ["get_dashboard", "deploy_dashboard"],
            "lang": "en",
        },
    ]
    path = write_cases(tmp_path / "dangerous.jsonl", cases)
    logins = "select count(*) from assistant_audit where action = 'auth.login'"
    logins_before = _one(sql, logins)[0]
    before = _state(sql)

    result = run_eval(["--cases", str(path), "--json"], agent_env)

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["passed"], report["total"], report["failures"]) == (5, 5, []), report
    assert _state(sql) == before
    assert _one(sql, logins)[0] == logins_before + 1  # the eval's own sign-in, nothing else


def test_a_backend_that_is_not_running_is_a_clear_error_and_exit_status_2(
    tmp_path: Path, agent_env: dict[str, str]
) -> None:
    path = write_cases(
        tmp_path / "one.jsonl", [{"query": "hi", "expected_tools": [], "lang": "en"}]
    )
    env = {**agent_env, "BACKEND_URL": f"http://127.0.0.1:{free_port()}"}

    result = run_eval(["--cases", str(path)], env)

    assert result.returncode == 2 and result.stdout == ""
    assert "is not answering" in result.stderr and "BACKEND_URL" in result.stderr


def test_without_llm_api_base_the_offline_demo_model_is_what_gets_measured(
    tmp_path: Path, agent_env: dict[str, str], sql: psycopg.Connection[Any], fake_llm: FakeLLM
) -> None:
    cases = [
        {
            "query": "create a branch hotfix-stock on dashboard 23 and deploy it to staging",
            "expected_tools": ["create_branch", "deploy_dashboard"],
            "lang": "en",
        },
        {
            "query": "почему дашборд 17 падает?",
            "expected_tools": ["dashboard_health"],
            "lang": "ru",
        },
        {"query": "drop table orders on sample", "expected_tools": [], "lang": "en"},
    ]
    path = write_cases(tmp_path / "demo.jsonl", cases)
    branches = _one(sql, "select count(*) from dashboard_branches")

    result = run_eval(["--cases", str(path), "--json"], {**agent_env, "LLM_API_BASE": ""})

    assert result.returncode == 0, result.stderr
    assert "the offline demo model" in result.stderr
    report = json.loads(result.stdout)
    assert (report["passed"], report["total"]) == (3, 3), report["failures"]
    assert _one(sql, "select count(*) from dashboard_branches") == branches
    assert fake_llm.requests == []  # the configured endpoint was not used
