"""The demo model's walk for "fix the failing chart of dashboard N" on the built-in dashboards:
dashboard_health (which chart fails, and why) -> get_dashboard (its SQL) -> get_table_schema
(the columns its table has) -> create_branch -> commit_changes (the chart's SQL with the missing
column read from the closest column the table has). Each step is routed after the previous
tool's result, from what those results said (`learn`), never from knowledge of the demo data.
"""

from __future__ import annotations

import difflib
import re
import uuid
from typing import Any

from agent.demo.request import DEFAULT_DATASOURCE, Call, Request, Route

WANTS = re.compile(r"\b(fix|repair)\b|почин|исправ", re.I)
MISSING = re.compile(
    r"no such column: (\w+)|column \"?(\w+)\"? does not exist|missing in dataset: \['(\w+)'",
    re.I,
)
FROM = re.compile(r"\bfrom\s+([a-z_]\w*)", re.I)
STEPS = ("repair:health", "repair:dashboard", "repair:schema", "repair:branch", "repair:commit")


def steps(text: str, dashboard_id: int | None) -> list[str] | None:
    """The walk's steps when `text` asks to fix a dashboard's chart; None otherwise."""
    if (
        not WANTS.search(text)
        or dashboard_id is None
        or ("chart" not in text.lower() and ("график" not in text.lower()))
    ):
        return None
    return list(STEPS)


def learn(memory: dict[str, Any], tool: str, body: Any) -> None:
    """What a tool result tells the walk's next step."""
    if not isinstance(body, dict):
        return
    if tool == "dashboard_health":
        charts = (body.get("latest_run") or {}).get("charts") or []
        failing = next((c for c in charts if c.get("status") == "failing"), None)
        if failing:
            memory["failing"] = failing
    elif tool == "get_dashboard":
        memory["charts"] = {c.get("key"): c for c in body.get("charts") or []}
    elif tool == "get_table_schema":
        memory["columns"] = [str(c.get("name")) for c in body.get("items") or []]


def _fixed_sql(sql: str, missing: str, columns: list[str]) -> str | None:
    stem = missing.removesuffix("_id")
    found = [c for c in columns if stem in c] or difflib.get_close_matches(missing, columns, 1)
    if not found:
        return None
    column = found[0]
    first = re.sub(rf"\b{missing}\b", f"{column} AS {missing}", sql, count=1)
    head, _, tail = first.partition(f"{column} AS {missing}")
    return head + f"{column} AS {missing}" + re.sub(rf"\b{missing}\b", column, tail)


def _fix(req: Request, memory: dict[str, Any]) -> Route:
    failing = memory.get("failing") or {}
    chart = (memory.get("charts") or {}).get(failing.get("chart_key")) or {}
    found = MISSING.search(str(failing.get("message") or ""))
    if not chart or not found:
        return None
    missing = next(g for g in found.groups() if g)
    sql = _fixed_sql(str(chart.get("sql")), missing, memory.get("columns") or [])
    if sql is None:
        return None
    branch = req.memory.branches[-1] if req.memory.branches else None
    if branch is None:
        return None
    change = {"op": "update", "key": chart["key"], "chart": {"sql": sql}}
    message = f"Fix {chart.get('title')}: read {missing} from an existing column"
    return Call(
        "commit_changes", {"branch_id": branch["id"], "message": message, "changes": [change]}
    )


def route(req: Request, memory: dict[str, Any]) -> Route:
    """The call of one of the walk's steps (`req.raw` is the step's name)."""
    dashboard_id = req.memory.dashboard_id
    if req.raw not in STEPS or dashboard_id is None:
        return None
    if req.raw == "repair:health":
        return Call("dashboard_health", {"dashboard_id": dashboard_id})
    if req.raw == "repair:dashboard":
        return (
            Call("get_dashboard", {"dashboard_id": dashboard_id}) if memory.get("failing") else None
        )
    if req.raw == "repair:schema":
        chart = (memory.get("charts") or {}).get((memory.get("failing") or {}).get("chart_key"))
        table = FROM.search(str((chart or {}).get("sql") or ""))
        if not table:
            return None
        datasource = (chart or {}).get("datasource") or DEFAULT_DATASOURCE
        return Call("get_table_schema", {"table_ref": f"{datasource}.{table.group(1)}"})
    if req.raw == "repair:branch":
        name = f"fix-{dashboard_id}-{uuid.uuid4().hex[:6]}"
        return Call("create_branch", {"dashboard_id": dashboard_id, "name": name})
    return _fix(req, memory)
