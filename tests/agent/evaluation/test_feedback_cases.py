"""Up-rated answers become eval cases that `agent-chat eval --cases` runs as they are: the
answers are given by the real agent (the scripted model choosing the tools), rated through the
backend, exported by `/api/admin/feedback/cases`, then evaluated on the same model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent.evaluation.support import run_eval
from tests.agent.support import confirm_id, kinds
from tests.conftest import bearer
from tests.fakes.llm_server import FakeLLM

DEPLOY = {"dashboard_id": 42, "ref": "main", "environment": "staging"}
# marker -> what the scripted model calls for a question carrying it
SCRIPT: dict[str, dict[str, Any]] = {
    "golf:": {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}]},
    "hotel:": {
        "tool_calls": [
            {"name": "search_dashboards", "args": {"query": "sales"}},
            {"name": "dashboard_health", "args": {"dashboard_id": 42}},
        ]
    },
    "india:": {"tool_calls": [{"name": "deploy_dashboard", "args": DEPLOY}]},
    "juliet:": {"tool_calls": [{"name": "query_logs", "args": {"level": "error"}}]},
}
MARKERS = tuple(SCRIPT)


def answer_id(outputs: list[list[dict[str, Any]]]) -> int:
    return int(outputs[-1][-1]["metadata"]["message_id"])


def rate(api: Any, token: str, message_id: int, rating: str) -> None:
    response = api.put(
        f"/api/assistant/messages/{message_id}/feedback",
        json={"rating": rating},
        headers=bearer(token),
    )
    assert response.status_code == 200, response.text


def test_cases_exported_from_up_rated_answers_pass_the_eval_on_the_same_model(
    chat, tokens, conversation, fake_llm: FakeLLM, api, agent_env, tmp_path: Path
):
    for marker, response in SCRIPT.items():
        fake_llm.add_rule(marker, response)
    admin = tokens["admin"]
    asked = {
        "golf:": "golf: show dashboard 42",
        "hotel:": "hotel: найди дашборды продаж и проверь 42",
        "juliet:": "juliet: any errors in the logs?",
    }
    for marker, question in asked.items():
        outputs = chat.send(admin, conversation(), question)
        assert "tool_end" in kinds(outputs[-1]), outputs[-1]
        rate(api, admin, answer_id(outputs), "down" if marker == "juliet:" else "up")
    cid = conversation()
    call = confirm_id(chat.send(admin, cid, "india: deploy 42 to staging"))
    confirmed = chat.decide(admin, cid, "confirm", call)
    assert kinds(confirmed[-1])[0] == "tool_end"
    rate(api, admin, answer_id(confirmed), "up")

    exported = api.get("/api/admin/feedback/cases?rating=up", headers=bearer(admin))

    assert exported.status_code == 200, exported.text
    lines = [
        line for line in exported.text.splitlines() if json.loads(line)["query"].startswith(MARKERS)
    ]
    cases = [json.loads(line) for line in lines]
    assert sorted((c["query"], tuple(sorted(c["expected_tools"])), c["lang"]) for c in cases) == [
        ("golf: show dashboard 42", ("get_dashboard",), "en"),
        (
            "hotel: найди дашборды продаж и проверь 42",
            ("dashboard_health", "search_dashboards"),
            "ru",
        ),
        ("india: deploy 42 to staging", ("deploy_dashboard",), "en"),
    ]
    path = tmp_path / "rated.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    result = run_eval(["--cases", str(path), "--json"], agent_env)

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["passed"], report["total"]) == (3, 3), report["failures"]
