"""Whether a tool of an external MCP server asks a person first (CONTRACT.md, "External MCP
tools"): defined once here, for the agent (which pauses the call) and the backend (whose admin
listing shows, for each tool, whether it is confirmed and why).

A tool runs at once only when the server annotates it `readOnlyHint: true` and the admin has
not listed it in `confirm_tools`. A proxy tool (a server's `call_tool` that reaches its other
tools by name) is judged by the tool it names: a target that is not in the server's listing,
not enabled, or itself a proxy asks first, so no write runs unconfirmed through a proxy.

The tools are the dicts the backend stores from a listing: `{name, description, input_schema,
annotations}` (`annotations` as the server sent them, absent when it sent none).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Literal

# Why a tool asks first, or does not; the admin listing's `confirm_reason`.
Reason = Literal["read_only", "listed", "not_read_only", "proxy", "proxy_target_unknown"]
READ_ONLY: Reason = "read_only"  # annotated read-only, not listed: runs at once
LISTED: Reason = "listed"  # in the admin's `confirm_tools`
NOT_READ_ONLY: Reason = "not_read_only"  # no `readOnlyHint: true` from the server
PROXY: Reason = "proxy"  # reaches other tools: the named target decides, call by call
PROXY_TARGET_UNKNOWN: Reason = "proxy_target_unknown"  # a proxy call whose target is not known

PROXY_NAMES = frozenset({"call_tool"})  # FastMCP's tool-search proxy (Superset 6.1's default)

Tool = Mapping[str, Any]


def is_read_only(tool: Tool) -> bool:
    annotations = tool.get("annotations")
    return isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True


def is_proxy(tool: Tool) -> bool:
    """A tool that calls another tool of its server by name: FastMCP's `call_tool`, or any tool
    whose arguments are a tool `name` (string) and its `arguments` (object)."""
    if tool.get("name") in PROXY_NAMES:
        return True
    schema = tool.get("input_schema") or {}
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return False
    name, arguments = properties.get("name"), properties.get("arguments")
    return (
        isinstance(name, Mapping)
        and name.get("type") == "string"
        and isinstance(arguments, Mapping)
        and "object" in _types(arguments)
    )


def _types(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type")
    found = {declared} if isinstance(declared, str) else set(declared or [])
    for option in schema.get("anyOf") or []:
        if isinstance(option, Mapping) and isinstance(option.get("type"), str):
            found.add(option["type"])
    return found


def tool_reason(tool: Tool, confirm_tools: Collection[str]) -> Reason:
    """The rule for a tool as listed (not yet called): what the admin page shows."""
    if tool.get("name") in confirm_tools:
        return LISTED
    if is_proxy(tool):
        return PROXY
    return READ_ONLY if is_read_only(tool) else NOT_READ_ONLY


def asks_first(reason: Reason) -> bool:
    """Whether a tool of that reason pauses for the confirmation card (a proxy: unless the
    target of the call runs at once, see call_reason)."""
    return reason != READ_ONLY


def call_reason(
    tool: Tool,
    arguments: Mapping[str, Any],
    listing: Mapping[str, Tool],
    confirm_tools: Collection[str],
    enabled_tools: Collection[str] | None,
) -> Reason:
    """The rule for one call: a proxy's call is judged by the tool it names, looked up in the
    server's whole `listing` (by name); anything that cannot be resolved asks first."""
    reason = tool_reason(tool, confirm_tools)
    if reason != PROXY:
        return reason
    target_name = arguments.get("name")
    target = listing.get(target_name) if isinstance(target_name, str) else None
    if (
        target is None
        or is_proxy(target)
        or (enabled_tools is not None and target_name not in enabled_tools)
    ):
        return PROXY_TARGET_UNKNOWN
    return tool_reason(target, confirm_tools)
