"""The MCP server at /api/agent/mcp, driven by the `mcp` SDK's own client (and raw HTTP at its
boundary) against the real agent and backend processes."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import jwt
import pytest
from psycopg.rows import dict_row

from agent.tools.names import TOOL_NAMES
from tests.agent.mcp_support import answering, mcp_session, wait_ready
from tests.conftest import TEST_JWT_SECRET, bearer

DEPLOY = {"dashboard_id": 42, "ref": "main", "environment": "staging"}
VIEWER_TOOLS = {
    "search_dashboards", "get_dashboard", "dashboard_health", "list_tables",
    "get_table_schema", "execute_sql", "list_files", "read_file", "lookup_knowledge", "query_logs",
}  # fmt: skip
EDITOR_TOOLS = VIEWER_TOOLS | {"create_branch", "commit_changes"}


@pytest.fixture(scope="module")
def mcp_url(agent_url: str) -> str:
    wait_ready(agent_url)
    return agent_url


def deployments(sql: Any) -> int:
    return int(sql.execute("select count(*) from dashboard_deployments").fetchone()[0])


def mcp_rows(sql: Any, action: str) -> list[dict[str, Any]]:
    with sql.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT * FROM assistant_audit WHERE action = %s AND details->>'channel' = 'mcp'"
            " ORDER BY id",
            (action,),
        )
        return list(cur.fetchall())


async def list_names(session: Any) -> list[str]:
    return [tool.name for tool in (await session.list_tools()).tools]


@pytest.mark.parametrize(
    ("role", "expected"),
    [("viewer", VIEWER_TOOLS), ("editor", EDITOR_TOOLS), ("admin", set(TOOL_NAMES))],
)
async def test_each_role_lists_exactly_its_tools(mcp_url, tokens, role, expected):
    names = await mcp_session(mcp_url, tokens[role], list_names)
    assert set(names) == expected and len(names) == len(expected)


async def test_tools_are_described_as_the_model_sees_them(mcp_url, tokens):
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from agent.backend_client import BackendClient
    from agent.config import Settings
    from agent.tools.registry import build_tools

    async def tools(session: Any) -> Any:
        return (await session.list_tools()).tools

    listed = {tool.name: tool for tool in await mcp_session(mcp_url, tokens["admin"], tools)}
    client = BackendClient(Settings(jwt_secret=TEST_JWT_SECRET, database_url="postgresql://x"))
    try:
        for built in build_tools(client):
            function = convert_to_openai_tool(built)["function"]
            assert listed[built.name].description == function["description"]
            assert listed[built.name].inputSchema == function["parameters"]
    finally:
        await client.aclose()


async def test_a_viewer_is_refused_a_deploy_and_nothing_runs(mcp_url, tokens, sql):
    before = deployments(sql)
    answer, asked = answering("accept", {"confirm": True})

    async def deploy(session: Any) -> Any:
        return await session.call_tool("deploy_dashboard", DEPLOY)

    result = await mcp_session(mcp_url, tokens["viewer"], deploy, answer=answer)
    assert result.isError and result.structuredContent["code"] == "FORBIDDEN"
    assert json.loads(result.content[0].text)["code"] == "FORBIDDEN"
    assert asked == [] and deployments(sql) == before
    refused = mcp_rows(sql, "agent.tool_call")[-1]
    assert refused["resource_id"] == "deploy_dashboard" and refused["outcome"] == "failure"
    assert refused["details"]["code"] == "FORBIDDEN" and refused["actor_username"] == "viewer"


async def test_a_deploy_runs_only_after_the_person_accepts(mcp_url, tokens, sql):
    before = deployments(sql)
    answer, asked = answering("accept", {"confirm": True})

    async def deploy(session: Any) -> Any:
        return await session.call_tool("deploy_dashboard", DEPLOY)

    result = await mcp_session(mcp_url, tokens["admin"], deploy, answer=answer)
    assert not result.isError, result.content
    assert len(asked) == 1 and "deploy_dashboard" in asked[0].message
    assert "staging" in asked[0].message
    assert deployments(sql) == before + 1
    assert result.structuredContent == json.loads(result.content[0].text)
    deploy_row = mcp_rows(sql, "dashboard.deploy")[-1]
    assert deploy_row["actor_username"] == "admin"
    call_row = mcp_rows(sql, "agent.tool_call")[-1]
    assert call_row["outcome"] == "success" and call_row["resource_id"] == "deploy_dashboard"


@pytest.mark.parametrize(
    "answer", [("decline", None), ("cancel", None), ("accept", {"confirm": False}), None]
)
async def test_without_an_accepted_confirmation_nothing_runs(mcp_url, tokens, sql, answer):
    before = deployments(sql)
    callback = answering(*answer)[0] if answer else None  # None: no elicitation capability

    async def deploy(session: Any) -> Any:
        return await session.call_tool("deploy_dashboard", DEPLOY)

    result = await mcp_session(mcp_url, tokens["admin"], deploy, answer=callback)
    assert result.isError and result.structuredContent["code"] == "CONFIRMATION_REQUIRED"
    assert deployments(sql) == before


async def test_a_read_tool_runs_as_the_caller_and_is_audited(mcp_url, tokens, sql):
    async def get(session: Any) -> Any:
        return await session.call_tool("get_dashboard", {"dashboard_id": 42})

    result = await mcp_session(mcp_url, tokens["viewer"], get)
    assert not result.isError and result.structuredContent["id"] == 42
    row = mcp_rows(sql, "agent.tool_call")[-1]
    assert row["resource_id"] == "get_dashboard" and row["actor_username"] == "viewer"
    assert row["details"]["run_id"].startswith("mcp-")


async def test_a_personal_access_token_works_until_revoked(mcp_url, api, tokens):
    created = api.post(
        "/api/auth/tokens", json={"name": "mcp", "scope": "read"}, headers=bearer(tokens["admin"])
    ).json()
    names = await mcp_session(mcp_url, created["token"], list_names)
    assert set(names) == VIEWER_TOOLS  # `read`: viewer rights only
    revoked = api.delete(f"/api/auth/tokens/{created['id']}", headers=bearer(tokens["admin"]))
    assert revoked.status_code == 204
    response = _post(mcp_url, created["token"])
    assert response.status_code == 401 and response.json()["error"]["code"] == "UNAUTHORIZED"
    with pytest.raises(BaseException) as refused:  # the SDK's own client gives up too
        await mcp_session(mcp_url, created["token"], list_names)
    assert "401" in _leaves(refused.value)


def _leaves(error: BaseException) -> str:
    """Every message of an exception group (the SDK's task groups nest them)."""
    if isinstance(error, BaseExceptionGroup):
        return " ".join(_leaves(inner) for inner in error.exceptions)
    return repr(error)


def _post(agent_url: str, token: str | None, body: dict[str, Any] | None = None) -> httpx.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    payload = body or {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    return httpx.post(f"{agent_url}/api/agent/mcp", json=payload, headers=headers, timeout=10)


def test_no_token_and_forged_tokens_are_401_before_any_mcp(mcp_url):
    forged_jwt = jwt.encode(
        {"sub": str(uuid.uuid4()), "typ": "user", "roles": ["admin"], "exp": 4102444800},
        "not-the-secret-but-long-enough-0123456789",
        algorithm="HS256",
    )
    for token in (None, forged_jwt, "acp_" + uuid.uuid4().hex, "garbage"):
        response = _post(mcp_url, token)
        assert response.status_code == 401, response.text
        assert response.json()["error"]["code"] == "UNAUTHORIZED"
        assert "mcp-session-id" not in response.headers


def test_raw_initialize_hands_out_a_session_and_lists_over_any_request(mcp_url, tokens):
    first = _post(mcp_url, tokens["viewer"])
    assert first.status_code == 200, first.text
    session = first.headers["mcp-session-id"]
    listing = httpx.post(
        f"{mcp_url}/api/agent/mcp",
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        headers={
            **bearer(tokens["viewer"]),
            "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": session,
        },
        timeout=10,
    )
    assert listing.status_code == 200, listing.text
    assert "deploy_dashboard" not in listing.text and "get_dashboard" in listing.text


async def test_only_the_person_asked_can_answer_a_confirmation(mcp_url, tokens, sql):
    """Raw HTTP: while an admin's deploy waits for its elicitation, an `accept` posted by another
    user with the same session id is not taken; the admin's own `decline` is."""
    before = deployments(sql)
    accept = {"Accept": "application/json, text/event-stream"}
    init = _post(mcp_url, tokens["admin"], _initialize({"elicitation": {}}))
    session = init.headers["mcp-session-id"]
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "deploy_dashboard", "arguments": DEPLOY},
    }

    def answer(token: str, action: str) -> int:
        body = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": action}}
        if action == "accept":
            body["result"]["content"] = {"confirm": True}
        headers = {**accept, **bearer(token), "Mcp-Session-Id": session}
        return httpx.post(f"{mcp_url}/api/agent/mcp", json=body, headers=headers).status_code

    headers = {**accept, **bearer(tokens["admin"]), "Mcp-Session-Id": session}
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream("POST", f"{mcp_url}/api/agent/mcp", json=call, headers=headers) as stream,
    ):
        lines = stream.aiter_lines()
        asked: dict[str, Any] = {}
        async for line in lines:
            if line.startswith("data:") and '"elicitation/create"' in line:
                asked = json.loads(line[5:])
                break
        assert asked["method"] == "elicitation/create"
        assert answer(tokens["viewer"], "accept") in (200, 202)
        assert answer(tokens["admin"], "decline") == 202
        async for line in lines:
            if line.startswith("data:") and '"id":7' in line.replace(" ", ""):
                result = json.loads(line[5:])["result"]
                break
    assert result["isError"] and result["structuredContent"]["code"] == "CONFIRMATION_REQUIRED"
    assert deployments(sql) == before


def _initialize(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
