"""The pieces behind external tools' confirmation and bounded lists, without processes: the rule
of common/mcp_confirm.py on Superset-shaped listings, a long description kept whole, and the
tools a thread's find_tools answers bind."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from agent.external import search
from agent.external.servers import ExternalTool, ServerRules
from common import mcp_confirm

CALL_TOOL = {
    "name": "call_tool",
    "input_schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "arguments": {"anyOf": [{"type": "object"}, {"type": "null"}]},
        },
    },
}
RUN = {"name": "run", "input_schema": CALL_TOOL["input_schema"]}  # a proxy by its shape only
LISTING = {
    t["name"]: t
    for t in (
        {"name": "list_dashboards", "annotations": {"readOnlyHint": True}},
        {"name": "generate_chart", "annotations": {"readOnlyHint": False}},
        {"name": "search_tools"},
        CALL_TOOL,
        RUN,
    )
}


@pytest.mark.parametrize(
    ("tool", "args", "confirm", "enabled", "reason"),
    [
        ("list_dashboards", {}, [], None, "read_only"),
        ("list_dashboards", {}, ["list_dashboards"], None, "listed"),
        ("generate_chart", {}, [], None, "not_read_only"),
        ("search_tools", {}, [], None, "not_read_only"),
        ("call_tool", {"name": "list_dashboards"}, [], None, "read_only"),
        ("call_tool", {"name": "generate_chart"}, [], None, "not_read_only"),
        ("call_tool", {"name": "list_dashboards"}, ["list_dashboards"], None, "listed"),
        ("call_tool", {"name": "list_dashboards"}, [], ["call_tool"], "proxy_target_unknown"),
        ("call_tool", {"name": "nope"}, [], None, "proxy_target_unknown"),
        ("call_tool", {"name": ["list_dashboards"]}, [], None, "proxy_target_unknown"),
        ("call_tool", {}, [], None, "proxy_target_unknown"),
        ("call_tool", {"name": "run"}, [], None, "proxy_target_unknown"),
        ("run", {"name": "generate_chart"}, [], None, "not_read_only"),
        ("call_tool", {"name": "list_dashboards"}, ["call_tool"], None, "listed"),
    ],
)
def test_the_rule(tool, args, confirm, enabled, reason):
    assert mcp_confirm.call_reason(LISTING[tool], args, LISTING, confirm, enabled) == reason


def _tool(description: str, name: str = "generate_chart") -> ExternalTool:
    rules = ServerRules(listing=LISTING, confirm_tools=frozenset(), enabled_tools=None)
    schema = {"type": "object", "properties": {"request": {"type": "object"}}}
    return ExternalTool("superset", name, description, schema, "http://x/mcp", "admin", rules, {})


def test_a_long_description_is_cut_only_where_the_provider_limits_it_and_sent_whole():
    long = "Create a chart. " * 100 + "HOW TO CALL: dataset_id and config.chart_type."
    spec = _tool(long).spec(1024)["function"]
    assert len(spec["description"]) <= 1024
    assert spec["parameters"]["description"] == long  # the how-to-call text is not lost
    short = _tool("List dashboards.", "list_dashboards").spec(1024)["function"]
    assert "description" not in short["parameters"]


def test_found_tools_are_read_back_from_the_thread_latest_first():
    answer = search.answer(
        search.search([_tool("List dashboards.", "list_dashboards")], "dashboards")
    )
    messages = [
        AIMessage("", tool_calls=[{"name": "find_tools", "args": {}, "id": "a"}]),
        ToolMessage(json.dumps(answer), tool_call_id="a", name="find_tools"),
        ToolMessage(
            json.dumps({"tools": [{"name": "superset__generate_chart"}]}),
            tool_call_id="b",
            name="find_tools",
        ),
        ToolMessage("not json", tool_call_id="c", name="find_tools"),
    ]
    assert search.found_names(messages) == ["superset__generate_chart", "superset__list_dashboards"]
    assert answer["tools"][0]["asks_first"] is False
