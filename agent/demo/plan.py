"""Requests of several steps ("create a branch for 23 and deploy it to staging", "покажи логи
по дашборду 17 и проверь его здоровье"): the clauses are routed one by one, each after the
previous tool's result, so a later step sees what an earlier one did (the branch it created).

A request is split only when every clause routes to a tool on its own and the clauses name
different tools; otherwise it is one step, routed whole, as before ("dashboards 42 and 58").
"""

# ruff: noqa: RUF001, RUF002  (Russian words in patterns and examples are intended)
from __future__ import annotations

import re
from dataclasses import replace

from agent.demo.request import SELECT, Call, Memory, Request
from agent.demo.routes import route

SPLIT = re.compile(
    r"\s*,?\s*\b(?:and then|and also|and|then|after that|а потом|а затем|и затем|и потом|затем"
    r"|потом|и)\b\s*,?\s*",
    re.I,
)
DASHBOARD_WORD = re.compile(r"dash|дашборд|панел", re.I)


def clauses(text: str) -> list[str]:
    """The parts of `text` between "and", "then", "и", "потом"...; SQL is never split."""
    if SELECT.search(text):
        return [text]
    return [part for part in (p.strip(" ,.;") for p in SPLIT.split(text)) if part]


def _weak(call: Call, clause: str) -> bool:
    """The catch-all dashboard search, reached by a bare "list"/"покажи", is no step of its own."""
    return call.name == "search_dashboards" and DASHBOARD_WORD.search(clause) is None


def _learned(memory: Memory, call: Call) -> Memory:
    """What a planned call tells the next clause: the dashboard "it" is, a branch to come."""
    dashboard_id = call.args.get("dashboard_id")
    if not isinstance(dashboard_id, int):
        return memory
    branches = memory.branches
    if call.name == "create_branch":
        branches = [*branches, {"id": 0, "name": call.args["name"], "dashboard_id": dashboard_id}]
    return replace(memory, dashboard_id=dashboard_id, branches=branches)


def steps(text: str, memory: Memory) -> list[str]:
    """The request's steps in order: its clauses when each is a job of its own, else `[text]`."""
    parts = clauses(text)
    if len(parts) < 2:
        return [text]
    tools = []
    for part in parts:
        routed = route(Request(raw=part, text=part.lower(), memory=memory))
        if not isinstance(routed, Call) or _weak(routed, part):
            return [text]
        tools.append(routed.name)
        memory = _learned(memory, routed)
    return parts if len(set(tools)) > 1 else [text]
