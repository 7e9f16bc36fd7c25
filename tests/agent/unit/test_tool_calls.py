"""One check of a tool call's arguments and one runner outside the graph (agent/tools/calls.py):
the graph, an edited confirmation, a workflow step and an MCP call refuse the same call with the
same text (an edited confirmation as INVALID_INPUT, CONTRACT.md "Confirmations with edited
arguments"), and a tool run outside the graph fails with the backend's safe refusal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from langchain.tools import BaseTool, tool

from agent import hitl
from agent.backend_client import BackendClient, BackendError
from agent.config import Settings
from agent.context import Context
from agent.mcp_server import calls as mcp_calls
from agent.tools.calls import InvalidArguments, ToolFailure, check_arguments, run_tool
from agent.tools.registry import build_tools
from agent.tools.runtime import AgentRuntime, user_context
from agent.workflows import engine
from common.codes import Code

DEPLOY = {"dashboard_id": 42, "ref": "main", "environment": "staging"}
CONTEXT = Context(
    user_token="secret-token",
    user_id="u1",
    username="ann",
    roles=("viewer",),
    conversation_id="",
)


@pytest.fixture
async def deploy() -> AsyncIterator[BaseTool]:
    client = BackendClient(Settings(), http=httpx.AsyncClient())
    try:
        (built,) = build_tools(client, only=["deploy_dashboard"])
        yield built
    finally:
        await client.aclose()


def _refusal(deploy: BaseTool, args: dict[str, Any]) -> InvalidArguments:
    with pytest.raises(InvalidArguments) as caught:
        check_arguments(deploy, args)
    return caught.value


async def test_a_bad_value_and_an_unknown_argument_are_refused_by_name_not_by_value(deploy):
    bad = _refusal(deploy, {**DEPLOY, "environment": "the-moon"})
    assert bad.code == Code.INVALID_ARGUMENTS
    assert bad.message.startswith("Invalid arguments: environment: ")
    assert "the-moon" not in bad.message
    unknown = _refusal(deploy, {**DEPLOY, "force": True})
    assert unknown.message == "Invalid arguments: deploy_dashboard has no argument force"
    assert check_arguments(deploy, {**DEPLOY, "dashboard_id": "42"})["dashboard_id"] == 42


@pytest.mark.parametrize("args", [{**DEPLOY, "environment": "the-moon"}, {**DEPLOY, "x": 1}])
async def test_every_caller_refuses_a_call_with_the_one_text(deploy, args):
    expected = _refusal(deploy, args).message
    with pytest.raises(engine.StepFailure) as step:
        engine._checked(deploy, args)
    assert (step.value.code, step.value.message) == (Code.INVALID_ARGUMENTS, expected)
    with pytest.raises(mcp_calls.Refused) as mcp:
        mcp_calls._checked(deploy, args)
    assert (mcp.value.code, mcp.value.message) == (Code.INVALID_ARGUMENTS, expected)
    pending = hitl.Pending("i", "deploy_dashboard", "c1", DEPLOY, "Deploy")
    with pytest.raises(hitl.ConfirmationError) as edit:
        hitl.checked_edit(pending, args, deploy)
    assert edit.value.code == Code.INVALID_INPUT
    assert edit.value.message == f"options.args: {expected}; nothing was run."


async def test_a_commit_the_backend_would_refuse_is_refused_before_any_call():
    """`commit_changes` is checked against the backend's own commit models (one schema, not a
    mirror): a chart listing a column twice never leaves the agent."""
    client = BackendClient(Settings(), http=httpx.AsyncClient())
    try:
        (commit,) = build_tools(client, only=["commit_changes"])
        chart = {"key": "k1", "title": "T", "type": "table", "datasource": "sample"}
        args = {"branch_id": 1, "message": "m", "changes": [{"op": "add", "chart": {
            **chart, "sql": "SELECT 1 AS a", "expected_columns": ["a", "a"]}}]}  # fmt: skip
        with pytest.raises(InvalidArguments) as caught:
            check_arguments(commit, args)
        assert "duplicate expected column: a" in caught.value.message
        args["changes"][0]["chart"]["expected_columns"] = ["a"]
        assert check_arguments(commit, args)["changes"][0]["chart"]["expected_columns"] == ["a"]
    finally:
        await client.aclose()


async def test_a_tool_run_outside_the_graph_gets_the_context_and_a_safe_refusal():
    seen: list[Context] = []

    @tool("probe")
    async def probe(runtime: AgentRuntime, deny: bool = False) -> dict[str, Any]:
        """A probe."""
        seen.append(user_context(runtime))
        if deny:
            raise BackendError(403, Code.FORBIDDEN, "Only admins may do this.")
        return {"ok": True}

    assert await run_tool(probe, {}, CONTEXT, "call1") == {"ok": True}
    assert seen == [CONTEXT]
    with pytest.raises(ToolFailure) as caught:
        await run_tool(probe, {"deny": True}, CONTEXT, "call2")
    assert caught.value.code == Code.FORBIDDEN
    assert "Only admins may do this" in caught.value.message
    assert "viewer" in caught.value.message and "secret-token" not in caught.value.message
