"""The three evidence tools as the diagnosis model sees them: each takes the typed envelope
`{previous_observation?, input}` and runs the existing tool's backend call (agent/tools) with
the unwrapped `input`, returning a whitelisted projection (agent.diagnosis.projection).

The protocol (`previous_observation`) is checked by the ProgressProtocol middleware before a
tool runs; the tools here only run.
"""

from __future__ import annotations

import json
from typing import Any

from langchain.tools import BaseTool
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, ConfigDict, Field

from agent.backend_client import BackendClient
from agent.diagnosis.ledger import PreviousObservation
from agent.diagnosis.projection import project
from agent.tools.names import DIAGNOSIS_TOOLS, EXECUTE_SQL, LOOKUP_KNOWLEDGE, QUERY_LOGS
from agent.tools.registry import build_tools
from agent.tools.runtime import AgentRuntime
from common.tool_arguments import ExecuteSqlArgs, LookupKnowledgeArgs, QueryLogsArgs

PREVIOUS_HELP = (
    "Required after a call whose result had evidence (evidence_status OK): that call's id "
    "and whether it moved the diagnosis forward. Omit it only for the first call and after "
    "an EMPTY or ERROR result."
)


class Envelope(BaseModel):
    # Unknown keys are refused by the middleware (`unknown_keys`); the tool itself must let
    # the injected `runtime` argument through.
    model_config = ConfigDict(extra="ignore")

    previous_observation: PreviousObservation | None = Field(
        default=None, description=PREVIOUS_HELP
    )


class LookupKnowledgeEnvelope(Envelope):
    input: LookupKnowledgeArgs


class QueryLogsEnvelope(Envelope):
    input: QueryLogsArgs


class ExecuteSqlEnvelope(Envelope):
    input: ExecuteSqlArgs


ENVELOPES: dict[str, type[Envelope]] = {
    LOOKUP_KNOWLEDGE: LookupKnowledgeEnvelope,
    QUERY_LOGS: QueryLogsEnvelope,
    EXECUTE_SQL: ExecuteSqlEnvelope,
}

DESCRIPTIONS = {
    LOOKUP_KNOWLEDGE: (
        "Search the knowledge base (runbooks, known problems) for articles matching "
        "input.query; returns titles and snippets."
    ),
    QUERY_LOGS: (
        "Search the platform's operational logs (validation runs, deployments, SQL errors, "
        "migrations), newest first, by input.query words, minimum input.level, "
        "input.since/input.until (ISO 8601) and input.dashboard_id."
    ),
    EXECUTE_SQL: (
        "Run one read-only SELECT (input.query) on a datasource (input.datasource, e.g. "
        "sample); returns columns and the first rows."
    ),
}


def unknown_keys(args: dict[str, Any]) -> list[str]:
    """Top-level keys of a call's arguments that are not part of the envelope."""
    return sorted(set(args) - set(Envelope.model_fields) - {"input"})


def business_input(envelope: Envelope) -> BaseModel:
    """The envelope's typed `input`: the tool's own arguments."""
    value = getattr(envelope, "input", None)
    if not isinstance(value, BaseModel):
        raise TypeError(f"{type(envelope).__name__} has no typed input")
    return value


def _evidence_tool(name: str, business: StructuredTool) -> BaseTool:
    run_business = business.coroutine
    if run_business is None:
        raise TypeError(f"the {name} tool has no coroutine")

    async def run(runtime: AgentRuntime, **envelope: Any) -> ToolMessage:
        args = business_input(ENVELOPES[name].model_validate(envelope))
        fields = {key: getattr(args, key) for key in type(args).model_fields}
        body = await run_business(runtime=runtime, **fields)
        call_id = runtime.tool_call_id or ""
        status, observation = project(name, call_id, body)
        return ToolMessage(
            content=json.dumps(observation, ensure_ascii=False, default=str),
            tool_call_id=call_id,
            name=name,
            artifact={"evidence_status": status},
        )

    return StructuredTool.from_function(
        coroutine=run,
        name=name,
        description=DESCRIPTIONS[name],
        args_schema=ENVELOPES[name],
    )


def evidence_tools(client: BackendClient) -> list[BaseTool]:
    """lookup_knowledge, query_logs and execute_sql in their envelopes, over `client`."""
    existing = {tool.name: tool for tool in build_tools(client, only=DIAGNOSIS_TOOLS)}
    tools = []
    for name in DIAGNOSIS_TOOLS:
        business = existing[name]
        if not isinstance(business, StructuredTool):
            raise TypeError(f"the {name} tool is not a StructuredTool")
        tools.append(_evidence_tool(name, business))
    return tools
