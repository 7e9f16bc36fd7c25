"""The agent's tools against the real backend: contract names and arguments, real data, RBAC
decided on the user behind X-On-Behalf-Of, audit rows naming both identities, and arguments
refused by the schema before any HTTP call."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from langchain.tools import BaseTool
from pydantic import BaseModel as PydanticModel
from pydantic import ValidationError

from agent.backend_client import BackendClient, BackendError
from agent.context import Context
from agent.tools.names import CONFIRM_TOOLS, describe_call
from tests.agent import _tools_fixtures as fixtures
from tests.agent._tools_fixtures import Recorder, run_tool
from tests.conftest import bearer

# Fixtures shared with the other agent tool tests.
backend_client = fixtures.backend_client
contexts = fixtures.contexts
recorder = fixtures.recorder
tools = fixtures.tools


Tools = dict[str, BaseTool]
Contexts = dict[str, Context]

CONTRACT = {
    "search_dashboards": ["query", "status"],
    "get_dashboard": ["dashboard_id"],
    "dashboard_health": ["dashboard_id"],
    "create_branch": ["dashboard_id", "name"],
    "commit_changes": ["branch_id", "message", "changes"],
    "deploy_dashboard": ["dashboard_id", "ref", "environment"],
    "execute_migration": ["datasource", "migration_id"],
    "list_tables": ["datasource"],
    "get_table_schema": ["table_ref"],
    "execute_sql": ["datasource", "query"],
    "list_files": ["prefix"],
    "read_file": ["key"],
    "lookup_knowledge": ["query"],
    "query_logs": ["query", "level", "since", "until", "dashboard_id"],
}


def model_schema(tool: BaseTool) -> dict[str, Any]:
    """The JSON schema of the arguments a model sees for `tool`."""
    schema = tool.tool_call_schema
    assert isinstance(schema, type) and issubclass(schema, PydanticModel)
    return schema.model_json_schema()


def test_every_contract_tool_exists_with_exactly_its_contract_arguments(tools: Tools) -> None:
    assert {name: list(model_schema(t)["properties"]) for name, t in tools.items()} == CONTRACT
    for tool in tools.values():
        assert "runtime" not in str(model_schema(tool))
        assert len(tool.description) > 40


def test_only_the_dangerous_tools_ask_for_confirmation_and_their_docs_say_so(tools: Tools) -> None:
    assert set(CONFIRM_TOOLS) == {"commit_changes", "deploy_dashboard", "execute_migration"}
    for name, tool in tools.items():
        says_confirm = "must confirm" in " ".join(tool.description.split())
        assert says_confirm == (name in CONFIRM_TOOLS), name


def test_confirmation_line_names_the_call_and_tolerates_missing_arguments() -> None:
    deploy = {"dashboard_id": 42, "ref": "main", "environment": "production"}
    assert describe_call("deploy_dashboard", deploy) == "Deploy dashboard 42 (main) to production"
    commit = {"branch_id": 3, "message": "Fix", "changes": [{"op": "remove", "key": "a"}]}
    assert describe_call("commit_changes", commit) == "Commit 1 change(s) to branch 3: Fix"
    assert describe_call("execute_migration", {}) == "Apply migration ? to datasource ?"


async def test_search_for_failing_dashboards_finds_17_and_23(
    tools: Tools, contexts: Contexts
) -> None:
    result = await run_tool(tools["search_dashboards"], {"status": "failing"}, contexts["viewer"])
    ids = {item["id"] for item in result["items"]}
    assert {17, 23} <= ids and 42 not in ids
    assert {item["status"] for item in result["items"]} == {"failing"}


async def test_get_dashboard_returns_42_with_its_charts(tools: Tools, contexts: Contexts) -> None:
    result = await run_tool(tools["get_dashboard"], {"dashboard_id": 42}, contexts["viewer"])
    assert result["id"] == 42 and result["title"] == "Sales overview"
    assert result["charts"] and all("sql" in chart for chart in result["charts"])


async def test_dashboard_health_explains_the_missing_column_of_17(
    tools: Tools, contexts: Contexts
) -> None:
    result = await run_tool(tools["dashboard_health"], {"dashboard_id": 17}, contexts["viewer"])
    assert result["status"] == "failing"
    messages = [c["message"] for c in result["latest_run"]["charts"] if c["status"] == "failing"]
    assert any("campaign_id" in message for message in messages)


async def test_unknown_dashboard_is_a_backend_not_found(tools: Tools, contexts: Contexts) -> None:
    with pytest.raises(BackendError) as caught:
        await run_tool(tools["get_dashboard"], {"dashboard_id": 999_999}, contexts["viewer"])
    assert (caught.value.status, caught.value.code) == (404, "NOT_FOUND")


async def test_create_branch_acts_for_the_user_and_the_audit_row_names_both_identities(
    tools: Tools, contexts: Contexts, sql: psycopg.Connection
) -> None:
    name = f"agent-{uuid.uuid4().hex[:8]}"
    args = {"dashboard_id": 42, "name": name}
    branch = await run_tool(tools["create_branch"], args, contexts["editor"])
    assert branch["name"] == name and branch["dashboard_id"] == 42
    row = sql.execute(
        "SELECT actor_username, service_client_id, outcome FROM assistant_audit "
        "WHERE action = 'dashboard.branch_create' AND details->>'name' = %s",
        (name,),
    ).fetchone()
    assert row == ("editor", "agent-chat", "success")


async def test_commit_changes_adds_a_chart_to_the_branch(
    tools: Tools, contexts: Contexts, api: httpx.Client, tokens: dict[str, str]
) -> None:
    args = {"dashboard_id": 42, "name": f"agent-{uuid.uuid4().hex[:8]}"}
    branch = await run_tool(tools["create_branch"], args, contexts["editor"])
    chart = {
        "key": "agent-kpi",
        "title": "Orders",
        "type": "number",
        "datasource": "sample",
        "sql": "SELECT COUNT(*) AS orders FROM orders",
        "expected_columns": ["orders"],
    }
    commit = {
        "branch_id": branch["id"],
        "message": "Add KPI",
        "changes": [{"op": "add", "chart": chart}],
    }
    result = await run_tool(tools["commit_changes"], commit, contexts["editor"])
    assert result["branch_id"] == branch["id"] and result["message"] == "Add KPI"
    stored = api.get(f"/api/branches/{branch['id']}", headers=bearer(tokens["viewer"])).json()
    assert "agent-kpi" in [c["key"] for c in stored["definition"]["charts"]]


async def test_viewer_cannot_deploy_and_the_backend_says_forbidden(
    tools: Tools, contexts: Contexts
) -> None:
    args = {"dashboard_id": 42, "ref": "main", "environment": "production"}
    with pytest.raises(BackendError) as caught:
        await run_tool(tools["deploy_dashboard"], args, contexts["viewer"])
    assert (caught.value.status, caught.value.code) == (403, "FORBIDDEN")


async def test_admin_deploys_main_of_42_to_staging(tools: Tools, contexts: Contexts) -> None:
    args = {"dashboard_id": 42, "ref": "main", "environment": "staging"}
    result = await run_tool(tools["deploy_dashboard"], args, contexts["admin"])
    assert result["environment"] == "staging" and result["dashboard_id"] == 42
    assert result["deployed_by"] == "admin" and result["version_id"]


async def test_editor_cannot_apply_a_migration(tools: Tools, contexts: Contexts) -> None:
    args = {"datasource": "sample", "migration_id": "20261101_inventory_snapshots"}
    with pytest.raises(BackendError) as caught:
        await run_tool(tools["execute_migration"], args, contexts["editor"])
    assert caught.value.status == 403


async def test_admin_applying_an_unknown_migration_is_not_found(
    tools: Tools, contexts: Contexts
) -> None:
    args = {"datasource": "sample", "migration_id": "20200101_never_shipped"}
    with pytest.raises(BackendError) as caught:
        await run_tool(tools["execute_migration"], args, contexts["admin"])
    assert caught.value.status == 404


async def test_tables_columns_and_capped_sql_on_the_sample_datasource(
    tools: Tools, contexts: Contexts
) -> None:
    viewer = contexts["viewer"]
    listed = await run_tool(tools["list_tables"], {"datasource": "sample"}, viewer)
    assert "orders" in [t["name"] for t in listed["items"]]
    every = await run_tool(tools["list_tables"], {}, viewer)
    assert "orders" in next(d for d in every["datasources"] if d["name"] == "sample")["tables"]
    schema = await run_tool(tools["get_table_schema"], {"table_ref": "sample.orders"}, viewer)
    assert "order_date" in [c["name"] for c in schema["items"]]
    rows = await run_tool(
        tools["execute_sql"], {"datasource": "sample", "query": "SELECT id FROM orders"}, viewer
    )
    assert rows["columns"] == ["id"] and len(rows["rows"]) == 50
    assert rows["truncated"] is True and "50" in rows["note"]


async def test_a_write_statement_is_refused_by_the_backend(
    tools: Tools, contexts: Contexts
) -> None:
    args = {"datasource": "sample", "query": "DELETE FROM orders"}
    with pytest.raises(BackendError) as caught:
        await run_tool(tools["execute_sql"], args, contexts["viewer"])
    assert (caught.value.status, caught.value.code) == (422, "SQL_REJECTED")


async def test_knowledge_and_logs_find_the_campaign_id_rename(
    tools: Tools, contexts: Contexts
) -> None:
    viewer = contexts["viewer"]
    found = await run_tool(tools["lookup_knowledge"], {"query": "no such column"}, viewer)
    assert any("no such column" in a["title"].lower() for a in found["items"])
    logs = await run_tool(tools["query_logs"], {"level": "error", "dashboard_id": 17}, viewer)
    assert logs["items"] and {e["dashboard_id"] for e in logs["items"]} == {17}
    assert any("campaign_id" in e["message"] for e in logs["items"])


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("get_dashboard", {"dashboard_id": 0}),
        ("search_dashboards", {"status": "broken"}),
        ("deploy_dashboard", {"dashboard_id": 42, "ref": "main", "environment": "prod"}),
        ("create_branch", {"dashboard_id": 42, "name": "has space"}),
        ("get_table_schema", {"table_ref": "orders"}),
        ("execute_migration", {"datasource": "sample", "migration_id": "../etc"}),
        ("commit_changes", {"branch_id": 1, "message": "m", "changes": [{"op": "rename"}]}),
        ("commit_changes", {"branch_id": 1, "message": "m", "changes": []}),
        ("query_logs", {"since": "2026-11-29T10:00:00Z", "until": "2026-11-28T10:00:00"}),
        ("read_file", {"key": ""}),
    ],
)
async def test_invalid_arguments_are_refused_before_any_http_call(
    tools: Tools, contexts: Contexts, recorder: Recorder, name: str, args: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError):
        await run_tool(tools[name], args, contexts["admin"])
    assert recorder.paths() == []


async def test_a_run_without_a_user_context_calls_nothing(tools: Tools, recorder: Recorder) -> None:
    with pytest.raises(BackendError) as caught:
        await run_tool(tools["search_dashboards"], {}, None)
    assert caught.value.code == "UNAUTHORIZED" and recorder.requests == []


async def test_the_user_jwt_travels_as_x_on_behalf_of_next_to_the_service_jwt(
    tools: Tools, contexts: Contexts, recorder: Recorder
) -> None:
    await run_tool(tools["get_dashboard"], {"dashboard_id": 42}, contexts["viewer"])
    sent = next(r for r in recorder.requests if r.url.path == "/api/dashboards/42")
    assert sent.headers["X-On-Behalf-Of"] == contexts["viewer"].user_token
    assert sent.headers["Authorization"].startswith("Bearer ")
    assert contexts["viewer"].user_token not in sent.headers["Authorization"]


async def test_files_are_listed_under_a_prefix_and_read_as_text(
    tools: Tools, contexts: Contexts
) -> None:
    viewer = contexts["viewer"]
    listed = await run_tool(tools["list_files"], {"prefix": "exports/"}, viewer)
    keys = [item["key"] for item in listed["items"]]
    assert "exports/sales_2026_10.csv" in keys and all(k.startswith("exports/") for k in keys)
    read = await run_tool(tools["read_file"], {"key": "configs/dashboard_42.json"}, viewer)
    assert read["key"] == "configs/dashboard_42.json" and "42" in read["content"]
    assert len(read["content"]) <= 8_000


async def test_a_long_file_is_cut_with_a_note(
    tools: Tools, contexts: Contexts, data_dir: Path
) -> None:
    key = f"tests/long-{uuid.uuid4().hex[:8]}.txt"
    path = data_dir / "files" / key  # the local store of conf.yml: file://{data_dir}/files
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("line of text\n" * 2_000, encoding="utf-8")
    read = await run_tool(tools["read_file"], {"key": key}, contexts["viewer"])
    assert read["size"] == 26_000 and read["content"] == ("line of text\n" * 2_000)[:8_000]
    assert "8000" in read["note"]


@pytest.mark.parametrize(
    ("key", "status", "code"),
    [("images/logo.png", 415, "UNSUPPORTED_FILE"), ("../etc/passwd", 422, "INVALID_KEY")],
)
async def test_binary_and_traversal_keys_are_refused_by_the_backend(
    tools: Tools, contexts: Contexts, key: str, status: int, code: str
) -> None:
    with pytest.raises(BackendError) as caught:
        await run_tool(tools["read_file"], {"key": key}, contexts["viewer"])
    assert (caught.value.status, caught.value.code) == (status, code)


async def test_a_refused_service_token_is_renewed_and_the_write_runs_once(
    backend_client: BackendClient, tokens: dict[str, str], recorder: Recorder
) -> None:
    backend_client._service_token = "not-a-valid-token"  # as if the secret had been rotated
    backend_client._service_token_expiry = time.monotonic() + 3600
    title = f"renewal-{uuid.uuid4().hex[:8]}"
    created = await backend_client.request(
        "POST", "/api/assistant/conversations", user_token=tokens["editor"], json={"title": title}
    )
    assert created["title"] == title
    listed = await backend_client.request(
        "GET", "/api/assistant/conversations", user_token=tokens["editor"], params={"limit": 200}
    )
    assert [c["title"] for c in listed["items"]].count(title) == 1
    assert backend_client._service_token != "not-a-valid-token"


async def test_a_refused_user_token_is_not_retried(
    backend_client: BackendClient, recorder: Recorder
) -> None:
    with pytest.raises(BackendError) as refused:
        await backend_client.request("GET", "/api/auth/me", user_token="forged.user.token")
    assert refused.value.status == 401
    assert recorder.paths() == ["/api/auth/me"]  # one attempt: the user's token is the problem
