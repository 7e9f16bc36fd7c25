"""Which of the registry's tools a caller may see over MCP, described exactly as the agent's
model sees them (the same name, description and argument schema: one registry, no second list)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from mcp import types

from agent.tools.names import TOOLS, reaches


def may_run(roles: Iterable[str], tool: str) -> bool:
    """Whether `roles` reach the lowest role of `tool` (an unknown tool: never)."""
    info = TOOLS.get(tool)
    if info is None:
        return False
    return reaches(roles, info.role)


class Catalogue:
    """The MCP descriptions of the agent's tools, computed once."""

    def __init__(self, tools: Mapping[str, BaseTool]) -> None:
        self.tools = dict(tools)
        self._described = {name: _described(tool) for name, tool in self.tools.items()}

    def listed(self, roles: Iterable[str]) -> list[types.Tool]:
        """The tools `roles` may run, in the registry's order."""
        roles = tuple(roles)
        return [tool for name, tool in self._described.items() if may_run(roles, name)]


def _described(tool: BaseTool) -> types.Tool:
    function: dict[str, Any] = convert_to_openai_tool(tool)["function"]
    schema = function.get("parameters") or {"type": "object", "properties": {}}
    return types.Tool(
        name=function["name"], description=function.get("description", ""), inputSchema=schema
    )
