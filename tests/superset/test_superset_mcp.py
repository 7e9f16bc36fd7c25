"""Superset 6.1's own MCP service as the agent's external tools (CONTRACT.md, "External MCP
tools"): `superset mcp run` beside the staging Superset (tests/support/superset_mcp.py),
registered by an admin twice, with Superset's tool search off (its whole catalog) and on (its
`search_tools` + `call_tool` proxy). Reads run at once; `generate_chart` waits for the card and
runs once; a `generate_chart` through the proxy waits too; with the whole catalog registered a
plain turn's model request stays within `agent.external_tools_budget_chars`, and the scripted
model still finds and calls `list_dashboards` and `generate_chart` through `find_tools`."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

from tests.agent.support import Chat, confirm_id, kinds, of_type
from tests.fakes.llm_server import FakeLLM
from tests.superset.conftest import Backend, Stack
from tests.support import superset_mcp
from tests.support.processes import scripted_agent

BUDGET = 12_000  # agent.external_tools_budget_chars' default


@pytest.fixture(scope="module")
def mcp_urls(
    superset_stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    """Superset's MCP service for staging, with its tool search off and on."""
    try:
        venv = superset_mcp.venv()
    except subprocess.CalledProcessError as exc:  # no network and no cached venv
        pytest.skip(f"Superset's MCP venv could not be built: {exc.stderr[-300:]}")
    work = tmp_path_factory.mktemp("superset-mcp")
    with ExitStack() as stack:
        urls = {
            name: stack.enter_context(
                superset_mcp.serve(superset_stack.staging, venv, work / name, tool_search=on)
            )
            for name, on in (("superset", False), ("supersearch", True))
        }
        yield urls


@pytest.fixture(scope="module")
def mcp_agent(
    ss_env: dict[str, str],
    ss_backend: Backend,
    ss_llm: FakeLLM,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    """An agent that reads the server list on every turn (the suite's own keeps it 10 s)."""
    log = tmp_path_factory.mktemp("ss-mcp-agent") / "agent.log"
    with scripted_agent(
        ss_env, backend=ss_backend.url, llm=ss_llm.url, log_path=log,
        AGENT__MCP_REFRESH_S="0", AGENT__MCP_TIMEOUT_S="60",
    ) as base:  # fmt: skip
        yield base


@pytest.fixture(scope="module")
def registered(
    ss_api: httpx.Client, ss_as: dict[str, dict[str, str]], mcp_urls: dict[str, str]
) -> Iterator[dict[str, dict[str, Any]]]:
    """Both services as external servers (the admin's page answers their listing)."""
    created = {}
    for name, url in mcp_urls.items():
        response = ss_api.post(
            "/api/admin/mcp-servers", json={"name": name, "url": url}, headers=ss_as["admin"]
        )
        assert response.status_code == 201, response.text
        created[name] = response.json()
    listed = ss_api.get("/api/admin/mcp-servers", headers=ss_as["admin"]).json()["items"]
    yield {s["name"]: s for s in listed if s["name"] in created}
    for server in created.values():
        ss_api.delete(f"/api/admin/mcp-servers/{server['id']}", headers=ss_as["admin"])


@pytest.fixture()
def llm(ss_llm: FakeLLM) -> FakeLLM:
    ss_llm.reset()
    return ss_llm


def _token(headers: dict[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


def _conversation(api: httpx.Client, headers: dict[str, str]) -> str:
    response = api.post("/api/assistant/conversations", json={}, headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _charts_named(stack: Stack, name: str) -> int:
    admin = stack.admin("staging")
    try:
        query = f"(filters:!((col:slice_name,opr:eq,value:{name})))"
        return int(admin.call("GET", "/api/v1/chart/", params={"q": query})["count"])
    finally:
        admin.close()


def _dataset_id(stack: Stack) -> int:
    admin = stack.admin("staging")
    try:
        return int(admin.call("GET", "/api/v1/dataset/")["result"][0]["id"])
    finally:
        admin.close()


def _chart_request(stack: Stack, name: str) -> dict[str, Any]:
    return {
        "request": {
            "dataset_id": _dataset_id(stack),
            "config": {"chart_type": "table", "columns": [{"name": "region"}]},
            "chart_name": name,
            "save_chart": True,
            "generate_preview": False,
        }
    }


def _tools_size(request: dict[str, Any]) -> int:
    return len(json.dumps(request.get("tools") or []))


def test_the_listing_shows_supersets_own_annotations(registered):
    tools = {t["name"]: t for t in registered["superset"]["tools"]}
    assert len(tools) >= 20 and registered["superset"]["status"] == "ok"
    assert (tools["list_dashboards"]["confirm"], tools["list_dashboards"]["read_only"]) == (
        False,
        True,
    )
    assert tools["generate_chart"]["confirm_reason"] == "not_read_only"
    assert tools["execute_sql"]["confirm"] is True
    proxied = {t["name"]: t for t in registered["supersearch"]["tools"]}
    assert proxied["call_tool"]["confirm_reason"] == "proxy"
    assert "generate_chart" not in proxied  # behind the proxy


def test_a_plain_turn_stays_within_the_budget_and_a_read_runs_at_once(
    mcp_agent, ss_api, ss_as, llm, registered, synced
):
    chat, cid = Chat(mcp_agent), _conversation(ss_api, ss_as["admin"])
    llm.enqueue(
        {"tool_calls": [{"name": "find_tools", "args": {"query": "list dashboards"}}]},
        {"tool_calls": [{"name": "superset__list_dashboards", "args": {"request": {}}}]},
        {"text": "Two dashboards."},
    )
    final = chat.send(_token(ss_as["admin"]), cid, "Which dashboards are there?")[-1]
    plain = llm.requests[0]
    print(f"\nplain turn with Superset's catalog: request {len(json.dumps(plain))} bytes")
    names = {t["function"]["name"] for t in plain["tools"]}
    assert "find_tools" in names and not any(n.startswith("superset__") for n in names)
    assert "superset__list_dashboards" in {t["function"]["name"] for t in llm.requests[1]["tools"]}
    cards = of_type(final, "tool_end")
    assert [c["metadata"]["tool"] for c in cards] == ["find_tools", "superset__list_dashboards"]
    assert any(title in json.dumps(cards[1]["metadata"]["output"]) for title in synced)


def test_a_confirmed_generate_chart_runs_once(
    mcp_agent, ss_api, ss_as, llm, registered, superset_stack
):
    name = f"mcpchart{uuid.uuid4().hex[:8]}"
    chat, cid = Chat(mcp_agent), _conversation(ss_api, ss_as["admin"])
    llm.enqueue(
        {"tool_calls": [{"name": "find_tools", "args": {"query": "create a chart"}}]},
        {
            "tool_calls": [
                {"name": "superset__generate_chart", "args": _chart_request(superset_stack, name)}
            ]
        },
    )
    asked = chat.send(_token(ss_as["admin"]), cid, "Make a table chart of regions")
    (card,) = of_type(asked[-1], "confirm_required")
    assert card["metadata"]["tool"] == "superset__generate_chart"
    assert _charts_named(superset_stack, name) == 0
    llm.enqueue({"text": "Created."})
    done = chat.decide(_token(ss_as["admin"]), cid, "confirm", confirm_id(asked))
    assert kinds(done[-1]) == ["tool_end", "text"], done[-1]
    assert _charts_named(superset_stack, name) == 1


def test_a_generate_chart_through_supersets_proxy_waits_for_the_card(
    mcp_agent, ss_api, ss_as, llm, registered, superset_stack
):
    name = f"mcpproxy{uuid.uuid4().hex[:8]}"
    args = {"name": "generate_chart", "arguments": _chart_request(superset_stack, name)}
    chat, cid = Chat(mcp_agent), _conversation(ss_api, ss_as["admin"])
    llm.enqueue({"tool_calls": [{"name": "supersearch__call_tool", "args": args}]})
    asked = chat.send(_token(ss_as["admin"]), cid, "Make a chart through the proxy")
    (card,) = of_type(asked[-1], "confirm_required")
    assert card["metadata"]["tool"] == "supersearch__call_tool"
    llm.enqueue({"text": "Not made."})
    chat.decide(_token(ss_as["admin"]), cid, "reject", confirm_id(asked))
    assert _charts_named(superset_stack, name) == 0


def test_request_size_with_and_without_the_budget(
    mcp_agent, ss_env, ss_backend, ss_api, ss_as, llm, registered, tmp_path_factory
):
    """The figure for the note: a plain turn's request with the whole catalog bound (an agent
    with no budget to speak of) beside one within the default budget."""
    log = tmp_path_factory.mktemp("ss-size") / "agent.log"
    with scripted_agent(
        ss_env, backend=ss_backend.url, llm=llm.url, log_path=log,
        AGENT__EXTERNAL_TOOLS_BUDGET_CHARS="10000000",
    ) as unbounded:  # fmt: skip
        sizes = {}
        for label, base in (("no budget", unbounded), ("budget", mcp_agent)):
            llm.reset()
            llm.enqueue({"text": "Hello."})
            Chat(base).send(_token(ss_as["admin"]), _conversation(ss_api, ss_as["admin"]), "Hi")
            sizes[label] = (len(json.dumps(llm.requests[0])), _tools_size(llm.requests[0]))
    print(f"\nmodel request of a plain turn (bytes, of which tools): {sizes}")
    assert sizes["no budget"][1] > 40_000
    assert sizes["budget"][1] < sizes["no budget"][1] - 30_000
