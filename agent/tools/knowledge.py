"""Knowledge base tool: search the platform's articles."""

from __future__ import annotations

from typing import Any

from langchain.tools import BaseTool, tool

from agent.backend_client import BackendClient
from agent.tools import names
from agent.tools.runtime import AgentRuntime, user_context
from agent.tools.shaping import cap_list
from common.tool_arguments import LookupKnowledgeArgs

MAX_ARTICLES = 5


def build_lookup_knowledge(client: BackendClient) -> BaseTool:
    @tool(names.LOOKUP_KNOWLEDGE, args_schema=LookupKnowledgeArgs)
    async def lookup_knowledge(query: str, runtime: AgentRuntime) -> dict[str, Any]:
        """Search the knowledge base (how-tos, runbooks, known problems) and return the best
        matching articles with a snippet. No confirmation needed."""
        params = {"q": query, "limit": MAX_ARTICLES}
        body = await client.call(
            user_context(runtime), "GET", "/api/knowledge/search", params=params
        )
        return cap_list(body, "items", limit=MAX_ARTICLES)

    return lookup_knowledge
