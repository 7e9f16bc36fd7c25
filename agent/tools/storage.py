"""File storage tools: list keys under a prefix and read one file's text."""

from __future__ import annotations

from typing import Any

from langchain.tools import BaseTool, tool

from agent.backend_client import BackendClient
from agent.tools import names
from agent.tools.runtime import AgentRuntime, user_context
from agent.tools.shaping import MAX_TEXT_CHARS, cap_list, cap_text
from common.tool_arguments import ListFilesArgs, ReadFileArgs

MAX_FILES = 100


def build_list_files(client: BackendClient) -> BaseTool:
    @tool(names.LIST_FILES, args_schema=ListFilesArgs)
    async def list_files(runtime: AgentRuntime, prefix: str | None = None) -> dict[str, Any]:
        """List stored files (key, size, last modified), optionally under a key prefix.
        No confirmation needed."""
        params = {"prefix": prefix, "limit": MAX_FILES}
        body = await client.call(user_context(runtime), "GET", "/api/storage/list", params=params)
        result = cap_list(body, "items", limit=MAX_FILES)
        if body.get("truncated"):
            result["note"] = f"only the first {MAX_FILES} files are listed; narrow the prefix"
        return result

    return list_files


def build_read_file(client: BackendClient) -> BaseTool:
    @tool(names.READ_FILE, args_schema=ReadFileArgs)
    async def read_file(key: str, runtime: AgentRuntime) -> dict[str, Any]:
        """Read a stored text file (CSV, JSON, text); at most 8,000 characters are returned.
        No confirmation needed."""
        params = {"key": key}
        body = await client.call(user_context(runtime), "GET", "/api/storage/read", params=params)
        content, cut = cap_text(str(body.get("content") or ""))
        result = {**{k: v for k, v in body.items() if k != "content"}, "content": content}
        if cut:
            result["note"] = f"content cut to the first {MAX_TEXT_CHARS} characters"
        return result

    return read_file
