"""Through the agent (scripted model) on real Superset: "fix the failing chart" goes
dashboard_health -> create_branch -> commit_changes (confirmed; the card says the chart now
runs) -> deploy_dashboard (confirmed) -> the production chart runs on production's rows."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.agent.support import Chat, confirm_id, kinds, of_type
from tests.superset.conftest import PRODUCTION_ROWS
from tests.support.superset_build import BROKEN


@pytest.fixture(scope="module")
def chat(ss_agent: str) -> Chat:
    return Chat(ss_agent)


def _cards(outputs: list[list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    return {m["metadata"]["tool"]: m["metadata"] for m in of_type(outputs[-1], "tool_end")}


def test_the_agent_fixes_the_failing_superset_chart_and_promotes_it(
    chat, ss_api: httpx.Client, ss_as, ss_llm, synced
):
    dashboard_id = synced[BROKEN.title]
    token = ss_as["admin"]["Authorization"].removeprefix("Bearer ")
    main = ss_api.get(f"/api/dashboards/{dashboard_id}", headers=ss_as["viewer"]).json()
    failing = next(
        c for c in main["main"]["definition"]["charts"] if c["title"] == "Discounts by region"
    )
    cid = ss_api.post("/api/assistant/conversations", json={}, headers=ss_as["admin"]).json()["id"]
    fix = {"metrics": [{"column": "amount", "aggregate": "SUM", "label": "discounts"}]}
    ss_llm.enqueue(
        {"tool_calls": [{"name": "dashboard_health", "args": {"dashboard_id": dashboard_id}}]},
        {
            "tool_calls": [
                {
                    "name": "create_branch",
                    "args": {"dashboard_id": dashboard_id, "name": "agent-fix"},
                }
            ]
        },
        {"text": "Discounts by region reads a missing column; branch agent-fix is ready."},
    )
    first = chat.send(token, cid, "Fix the failing chart of Discount watch")
    health = _cards(first)["dashboard_health"]["output"]
    assert health["status"] == "failing"
    branch = _cards(first)["create_branch"]["output"]
    change = {"op": "update", "key": failing["key"], "chart": fix}
    args = {"branch_id": branch["id"], "message": "Sum amount", "changes": [change]}
    ss_llm.enqueue({"tool_calls": [{"name": "commit_changes", "args": args}]})
    asked = chat.send(token, cid, "Commit the fix: sum the amount instead")
    assert kinds(asked[-1])[-1] == "confirm_required"
    deploy = {"dashboard_id": dashboard_id, "ref": "agent-fix", "environment": "production"}
    ss_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": deploy}]})
    committed = chat.decide(token, cid, "confirm", confirm_id(asked))
    card = _cards(committed)["commit_changes"]["output"]
    assert card["validation"]["status"] == "ok"
    runs = {c["title"]: c["status"] for c in card["validation"]["charts"]}
    assert runs["Discounts by region"] == "ok"
    assert kinds(committed[-1])[-1] == "confirm_required"
    ss_llm.enqueue({"text": "Fixed and deployed to production."})
    done = chat.decide(token, cid, "confirm", confirm_id(committed))
    assert _cards(done)["deploy_dashboard"]["output"]["environment"] == "production"
    data = ss_api.get(
        f"/api/dashboards/{dashboard_id}/charts/{failing['key']}/data",
        params={"environment": "production"},
        headers=ss_as["viewer"],
    )
    assert data.status_code == 200, data.text
    assert {r[0]: float(r[1]) for r in data.json()["rows"]} == dict(PRODUCTION_ROWS)
