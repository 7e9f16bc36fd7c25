"""Bounded tool lists: when the external tools a person may use would take more of a model
call than `agent.external_tools_budget_chars`, the model is offered `find_tools` instead. It
searches the person's external tools by words; the tools it found are bound for the model's
next calls (read back from the thread's own messages, so nothing else is stored), and are
called by their own names: the same tool node, confirmation rule and card as any external tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import AnyMessage, ToolMessage
from langchain_core.tools import StructuredTool

from agent.external.servers import ExternalTool
from common import mcp_confirm

FIND_TOOLS = "find_tools"
MAX_FOUND = 5  # tools one search answers with
MAX_BOUND = 8  # found tools bound to one model call (the latest searches win)
_WORD = re.compile(r"[a-z0-9]+")

SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": FIND_TOOLS,
        "description": (
            "Search the external tools (other systems' MCP servers, e.g. Superset) by what you "
            "need, in a few English words, e.g. 'list dashboards' or 'create chart'. Answers "
            "the matching tools with their whole descriptions and argument schemas; call a "
            "found tool by its `name` in your next step. Search again for other tools."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}


def _words(text: str) -> set[str]:
    # `list_dashboards` and "dashboards" match "dashboard": a plural's s is dropped
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _WORD.findall(text.lower())}


def search(tools: Iterable[ExternalTool], query: str, limit: int = MAX_FOUND) -> list[ExternalTool]:
    """The tools whose names (weighed thrice) and descriptions share most words with `query`."""
    wanted = _words(query)
    scored = []
    for position, tool in enumerate(tools):
        named, described = _words(f"{tool.server} {tool.tool}"), _words(tool.description)
        score = 3 * len(wanted & named) + len(wanted & described)
        if score:
            scored.append((-score, position, tool))
    return [tool for _, _, tool in sorted(scored, key=lambda item: item[:2])[:limit]]


def answer(found: Sequence[ExternalTool]) -> dict[str, Any]:
    """What find_tools returns: each tool whole, and whether calling it asks a person first."""
    return {
        "tools": [
            {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema or {"type": "object", "properties": {}},
                "asks_first": mcp_confirm.asks_first(
                    mcp_confirm.tool_reason(tool.rules.listing[tool.tool], tool.rules.confirm_tools)
                ),
            }
            for tool in found
        ],
        "note": "Call a tool by its name; nothing was run by this search."
        if found
        else "No external tool matches; try other words.",
    }


def as_tool(tools: Sequence[ExternalTool]) -> StructuredTool:
    """find_tools for one call, over the tools the run's user may be offered."""

    async def find(query: str) -> dict[str, Any]:
        return answer(search(tools, query))

    return StructuredTool(
        name=FIND_TOOLS,
        description=SPEC["function"]["description"],
        args_schema=SPEC["function"]["parameters"],
        coroutine=find,
    )


def found_names(messages: Sequence[AnyMessage]) -> list[str]:
    """The tool names earlier find_tools answers gave in this thread, the latest first."""
    names: list[str] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage) or message.name != FIND_TOOLS:
            continue
        try:
            listed = json.loads(str(message.content)).get("tools") or []
        except (ValueError, AttributeError):
            continue
        for item in listed:
            name = item.get("name") if isinstance(item, dict) else None
            if isinstance(name, str) and name not in names:
                names.append(name)
        if len(names) >= MAX_BOUND:
            break
    return names[:MAX_BOUND]
