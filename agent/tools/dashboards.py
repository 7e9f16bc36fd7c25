"""Dashboard tools: search, inspect, check health, branch, commit, deploy."""

from __future__ import annotations

from typing import Any

from langchain.tools import BaseTool, tool

from agent.backend_client import BackendClient
from agent.tools import names
from agent.tools.runtime import AgentRuntime, user_context
from agent.tools.shaping import MAX_ITEMS, pick
from common.tool_arguments import (
    Change,
    CommitChangesArgs,
    CreateBranchArgs,
    DashboardArgs,
    DeployDashboardArgs,
    SearchDashboardsArgs,
)

SUMMARY_KEYS = ("id", "title", "status", "owner", "tags", "last_validated_at")
CHART_KEYS = ("key", "title", "type", "datasource", "sql", "expected_columns")
RUN_KEYS = ("id", "ref", "version_id", "status", "started_at", "triggered_by")


def _environments(body: dict[str, Any]) -> dict[str, Any]:
    envs = body.get("environments") or {}
    return {
        name: pick(env, "version_id", "status", "deployed_at", "is_main")
        for name, env in envs.items()
        if env
    }


def _summary(body: dict[str, Any]) -> dict[str, Any]:
    return {**pick(body, *SUMMARY_KEYS), "environments": _environments(body)}


def _run(run: Any) -> dict[str, Any] | None:
    if not isinstance(run, dict):
        return None
    charts = [
        pick(chart, "chart_key", "chart_title", "status", "message", "row_count")
        for chart in run.get("charts", [])
    ]
    return {**pick(run, *RUN_KEYS), **({"charts": charts} if "charts" in run else {})}


def _dashboard(body: dict[str, Any]) -> dict[str, Any]:
    main = body.get("main") or {}
    charts = (main.get("definition") or {}).get("charts", [])
    return {
        **_summary(body),
        **pick(body, "description"),
        "main_version_id": body.get("main_version_id"),
        "charts": [pick(chart, *CHART_KEYS) for chart in charts],
        "branches": [
            pick(b, "id", "name", "head_version_id", "updated_at")
            for b in body.get("branches", [])[:MAX_ITEMS]
        ],
        "latest_validation": _run(body.get("latest_validation")),
    }


def build_search_dashboards(client: BackendClient) -> BaseTool:
    @tool(names.SEARCH_DASHBOARDS, args_schema=SearchDashboardsArgs)
    async def search_dashboards(
        runtime: AgentRuntime, query: str | None = None, status: str | None = None
    ) -> dict[str, Any]:
        """Find dashboards by words and/or validation status (ok, warning, failing).
        Use status="failing" for dashboards with validation problems. Returns id, title,
        status and what each environment serves. No confirmation needed."""
        params = {"query": query, "status": status, "limit": MAX_ITEMS}
        body = await client.call(user_context(runtime), "GET", "/api/dashboards", params=params)
        items = body.get("items", [])
        return {"total": body.get("total", len(items)), "items": [_summary(i) for i in items]}

    return search_dashboards


def build_get_dashboard(client: BackendClient) -> BaseTool:
    @tool(names.GET_DASHBOARD, args_schema=DashboardArgs)
    async def get_dashboard(dashboard_id: int, runtime: AgentRuntime) -> dict[str, Any]:
        """Show one dashboard: title, owner, status, environments, its charts (with SQL),
        branches and latest validation. No confirmation needed."""
        path = f"/api/dashboards/{dashboard_id}"
        return _dashboard(await client.call(user_context(runtime), "GET", path))

    return get_dashboard


def build_dashboard_health(client: BackendClient) -> BaseTool:
    @tool(names.DASHBOARD_HEALTH, args_schema=DashboardArgs)
    async def dashboard_health(dashboard_id: int, runtime: AgentRuntime) -> dict[str, Any]:
        """Explain a dashboard's validation health: overall status, each chart's result and
        error message from the latest run, and recent runs. Use it to answer "why is it
        failing". No confirmation needed."""
        path = f"/api/dashboards/{dashboard_id}/health"
        body = await client.call(user_context(runtime), "GET", path)
        return {
            **pick(body, "dashboard_id", "target", "version_id", "status"),
            "latest_run": _run(body.get("latest_run")),
            "history": [_run(r) for r in body.get("history", [])[:5]],
        }

    return dashboard_health


def build_create_branch(client: BackendClient) -> BaseTool:
    @tool(names.CREATE_BRANCH, args_schema=CreateBranchArgs)
    async def create_branch(dashboard_id: int, name: str, runtime: AgentRuntime) -> dict[str, Any]:
        """Create a branch of a dashboard from its main version, to edit it safely.
        Needs the editor role. No confirmation needed."""
        path = f"/api/dashboards/{dashboard_id}/branches"
        body = await client.call(user_context(runtime), "POST", path, json={"name": name})
        return {
            "dashboard_id": dashboard_id,
            **pick(body, "id", "name", "base_version_id", "head_version_id", "created_by"),
        }

    return create_branch


async def _validate_version(
    client: BackendClient, runtime: AgentRuntime, version: dict[str, Any]
) -> dict[str, Any]:
    """The new version's charts run (does the fix run?): its status and each chart's."""
    path = f"/api/dashboards/{version.get('dashboard_id')}/validate"
    run = await client.call(
        user_context(runtime), "POST", path, json={"ref": str(version.get("id"))}
    )
    charts = [
        {"title": c.get("chart_title"), "status": c.get("status"), "message": c.get("message")}
        for c in run.get("charts") or []
    ]
    return {"status": run.get("status"), "charts": charts}


def build_commit_changes(client: BackendClient) -> BaseTool:
    @tool(names.COMMIT_CHANGES, args_schema=CommitChangesArgs)
    async def commit_changes(
        branch_id: int, message: str, changes: list[Change], runtime: AgentRuntime
    ) -> dict[str, Any]:
        """Commit chart edits (add, update, remove) to a dashboard branch as a new version.
        Built-in charts: title, type, datasource, sql, expected_columns. Superset charts (key:
        the chart's UUID; key "dashboard" retitles the dashboard): title, viz_type, metrics,
        groupby, filters, x_axis, time_range, row_limit; add {title, viz_type, dataset, ...};
        remove {key}. A Superset commit is run on staging first and refused if a chart fails.
        Needs the editor role. A person must confirm it before it runs."""
        payload = {
            "message": message,
            "changes": [change.model_dump(exclude_unset=True) for change in changes],
        }
        path = f"/api/branches/{branch_id}/commits"
        body = await client.call(user_context(runtime), "POST", path, json=payload)
        version = body.get("version") or {}
        charts = (version.get("definition") or {}).get("charts", [])
        return {
            "branch_id": body.get("branch_id", branch_id),
            "version_id": version.get("id"),
            **pick(version, "message", "author", "created_at"),
            "chart_count": len(charts),
            "validation": await _validate_version(client, runtime, version),
        }

    return commit_changes


def build_deploy_dashboard(client: BackendClient) -> BaseTool:
    @tool(names.DEPLOY_DASHBOARD, args_schema=DeployDashboardArgs)
    async def deploy_dashboard(
        dashboard_id: int, ref: str, environment: str, runtime: AgentRuntime
    ) -> dict[str, Any]:
        """Deploy a dashboard version ('main', a branch name or a version id) to staging or
        production; the backend validates it first. Needs the admin role. A person must
        confirm it before it runs."""
        path = f"/api/dashboards/{dashboard_id}/deployments"
        payload = {"ref": ref, "environment": environment}
        body = await client.call(user_context(runtime), "POST", path, json=payload)
        return {
            **pick(body, "id", "dashboard_id", "environment", "version_id", "ref"),
            **pick(body, "deployed_by", "deployed_at"),
            "validation": _run(body.get("validation")),
        }

    return deploy_dashboard
