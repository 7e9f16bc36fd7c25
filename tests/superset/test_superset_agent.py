"""The agent's dashboard tools on real Superset environments, through the scripted model: the
same tools, their cards showing Superset's failing chart, and a confirmed deploy that runs once."""

from __future__ import annotations

from typing import Any

import httpx
import psycopg
import pytest

from tests.agent.support import Chat, confirm_id, kinds, of_type, text_of
from tests.superset.conftest import Stack
from tests.support import superset
from tests.support.superset_build import BROKEN, GOOD


@pytest.fixture(scope="module")
def chat(ss_agent: str) -> Chat:
    return Chat(ss_agent)


def _token(headers: dict[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


def _conversation(api: httpx.Client, headers: dict[str, str]) -> str:
    response = api.post("/api/assistant/conversations", json={}, headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _tool_cards(outputs: list[list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    return {m["metadata"]["tool"]: m["metadata"] for m in of_type(outputs[-1], "tool_end")}


def test_which_dashboards_fail_streams_the_failing_superset_chart(
    chat, ss_api, ss_as, ss_llm, synced
):
    broken = synced[BROKEN.title]
    cid = _conversation(ss_api, ss_as["viewer"])
    ss_llm.enqueue(
        {"tool_calls": [{"name": "search_dashboards", "args": {"status": "failing"}}]},
        {"tool_calls": [{"name": "dashboard_health", "args": {"dashboard_id": broken}}]},
        {"text": "Discount watch fails: its discounts chart reads a missing column."},
    )
    outputs = chat.send(_token(ss_as["viewer"]), cid, "Which dashboards fail?")
    cards = _tool_cards(outputs)
    assert [i["id"] for i in cards["search_dashboards"]["output"]["items"]] == [broken]
    run = cards["dashboard_health"]["output"]["latest_run"]
    assert cards["dashboard_health"]["output"]["status"] == "failing"
    failing = [c for c in run["charts"] if c["status"] == "failing"]
    assert [c["chart_title"] for c in failing] == ["Discounts by region"]
    assert "discount" in failing[0]["message"]
    assert text_of(outputs[-1]).startswith("Discount watch fails")
    # The model saw the same evidence, and never the service account's password.
    sent = str(ss_llm.requests)
    assert "Discounts by region" in sent and superset.ADMIN_PASSWORD not in sent


def test_a_deploy_to_production_asks_first_then_runs_once(
    chat, ss_api, ss_as, ss_llm, synced, superset_stack: Stack, ss_database_url
):
    dashboard_id = synced[GOOD.title]
    args = {"dashboard_id": dashboard_id, "ref": "main", "environment": "production"}
    cid = _conversation(ss_api, ss_as["admin"])
    token = _token(ss_as["admin"])

    def deploys() -> int:
        with psycopg.connect(ss_database_url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM dashboard_deployments WHERE dashboard_id = %s"
                " AND environment = 'production'",
                (dashboard_id,),
            ).fetchone()
        return int(row[0]) if row else 0

    before = deploys()
    ss_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": args}]})
    asked = chat.send(token, cid, "Promote Orders overview to production")
    assert kinds(asked[-1])[-1] == "confirm_required" and deploys() == before
    ss_llm.enqueue({"text": "Deployed to production."})
    done = chat.decide(token, cid, "confirm", confirm_id(asked))
    card = _tool_cards(done)["deploy_dashboard"]
    assert card["output"]["environment"] == "production"
    assert deploys() == before + 1
    prod = superset_stack.admin("production")
    try:
        uuid = ss_api.get(f"/api/dashboards/{dashboard_id}", headers=ss_as["viewer"]).json()[
            "source"
        ]["uuid"]
        assert prod.call("GET", f"/api/v1/dashboard/{uuid}")["result"]["id"] > 0
    finally:
        prod.close()
