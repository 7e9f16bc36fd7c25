"""The offline demo model walks "fix the failing chart of dashboard 17" on the built-in
dashboards, each step from the real backend's answers: health -> the chart's SQL -> its table's
columns -> a branch -> a commit whose SQL runs where the old one failed."""

from __future__ import annotations

import json
from typing import Any

import httpx
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from agent.demo.model import DemoChatModel
from tests.conftest import bearer


def _call(message: BaseMessage) -> tuple[str, dict[str, Any]]:
    assert isinstance(message, AIMessage) and len(message.tool_calls) == 1, message
    return message.tool_calls[0]["name"], message.tool_calls[0]["args"]


def _result(call: AIMessage, body: dict[str, Any]) -> ToolMessage:
    first = call.tool_calls[0]
    return ToolMessage(json.dumps(body), tool_call_id=first["id"], name=first["name"])


def test_the_demo_model_fixes_the_failing_chart_of_dashboard_17(
    api: httpx.Client, tokens: dict[str, str]
) -> None:
    viewer = bearer(tokens["viewer"])
    model = DemoChatModel()
    messages: list[BaseMessage] = [HumanMessage("fix the failing chart of dashboard 17")]
    answers = {
        "dashboard_health": lambda a: api.get(
            f"/api/dashboards/{a['dashboard_id']}/health", headers=viewer
        ).json(),
        "get_dashboard": lambda a: {
            "charts": api.get(f"/api/dashboards/{a['dashboard_id']}", headers=viewer).json()[
                "main"
            ]["definition"]["charts"]
        },
        "get_table_schema": lambda a: api.get(
            "/api/datasources/{}/tables/{}/columns".format(*a["table_ref"].split(".")),
            headers=viewer,
        ).json(),
        "create_branch": lambda a: {"id": 901, "name": a["name"], "dashboard_id": 17},
    }
    called = []
    while True:
        step = model.invoke(messages)
        name, args = _call(step)
        called.append(name)
        if name == "commit_changes":
            break
        messages += [step, _result(step, answers[name](args))]
    assert called == [
        "dashboard_health",
        "get_dashboard",
        "get_table_schema",
        "create_branch",
        "commit_changes",
    ]
    assert args["branch_id"] == 901
    [change] = args["changes"]
    assert change["op"] == "update" and change["key"] == "conversions_by_campaign"
    fixed = change["chart"]["sql"]
    ran = api.post("/api/datasources/sample/query", json={"sql": fixed}, headers=viewer)
    assert ran.status_code == 200, ran.text
    assert ran.json()["columns"][:2] == ["campaign_id", "conversions"]
    assert ran.json()["rows"]
