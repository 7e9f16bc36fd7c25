"""The agent graph itself (agent/graph.py: our middleware, the library's confirmation and
limits) run in-process with a scripted model, fake tools and an in-memory checkpointer, its
stream events applied to a Turn as the run does: the shapes the Turn reads are LangGraph's real
ones, and a confirmation resumes only the call it names. No processes."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from agent.config import Settings
from agent.context import Context
from agent.graph import build_agent, recursion_limit
from agent.hitl import ConfirmationError, closing_messages, pending_of, resolve
from agent.runs.answer import STREAM_MODE
from agent.stream import AnswerText, Turn, apply
from tests.agent.unit.scripted import ScriptedModel, say

RAN: list[str] = []


@tool("search_dashboards")
async def search_dashboards(query: str) -> dict[str, Any]:
    """Search dashboards."""
    RAN.append(f"search:{query}")
    return {"items": [{"id": 7, "title": "Sales"}]}


@tool("deploy_dashboard")
async def deploy_dashboard(dashboard_id: int, ref: str, environment: str) -> dict[str, Any]:
    """Deploy a dashboard."""
    RAN.append(f"deploy:{dashboard_id}")
    return {"deployed": dashboard_id}


CONTEXT = Context(
    user_token="jwt", user_id="1", username="admin", roles=("admin",), conversation_id="conv-1"
)
DEPLOY = {"dashboard_id": 7, "ref": "main", "environment": "prod"}


@pytest.fixture(autouse=True)
def _nothing_ran() -> None:
    RAN.clear()


def agent(*script: AIMessage) -> Any:
    settings = Settings()
    model = ScriptedModel(script=list(script))
    tools = [search_dashboards, deploy_dashboard]
    return build_agent(settings, model=model, tools=tools, checkpointer=InMemorySaver())


async def run(graph: Any, turn: Turn, value: Any) -> list[Any]:
    config = {
        "configurable": {"thread_id": "conv-1"},
        "recursion_limit": recursion_limit(Settings()),
    }
    pending = []
    config["callbacks"] = [AnswerText(turn)]  # as agent/runs/kinds/dynamic.py streams a turn
    async for update in graph.astream(value, config, context=CONTEXT, stream_mode=STREAM_MODE):
        pending += apply(turn, update)
    return pending


def ask(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def test_streamed_text_and_a_tool_card_come_out_as_the_protocol_shows_them():
    graph = agent(
        say("Let me look.", ("search_dashboards", "call_1", {"query": "sales"})),
        say("Found Sales."),
    )
    turn = Turn("conv-1")

    assert await run(graph, turn, ask("find sales")) == []

    shown = turn.snapshot()
    assert [m["content"] for m in shown] == ["Let me look.", "", "Found Sales."]
    card = shown[1]["metadata"]
    assert card["type"] == "tool_end" and card["output"] == {"items": [{"id": 7, "title": "Sales"}]}
    assert RAN == ["search:sales"]
    assert turn.record()[0] == "Let me look.\n\nFound Sales."


async def test_a_confirm_tool_waits_and_runs_only_when_its_own_call_is_confirmed():
    graph = agent(say("", ("deploy_dashboard", "call_d", DEPLOY)), say("Deployed."))
    config = {"configurable": {"thread_id": "conv-1"}}
    turn = Turn("conv-1")

    pending = await run(graph, turn, ask("deploy 7"))

    assert [p.call_id for p in pending] == ["call_d"] and RAN == []
    state = await graph.aget_state(config)
    assert [p.call_id for p in pending_of(state)] == ["call_d"]
    with pytest.raises(ConfirmationError):
        resolve(state, "confirm", "call_forged")
    assert RAN == []

    _, command = resolve(state, "confirm", "call_d")
    after = Turn("conv-1")
    assert await run(graph, after, command) == []

    assert RAN == ["deploy:7"]
    assert after.snapshot()[0]["metadata"]["type"] == "tool_end"
    assert after.snapshot()[-1]["content"] == "Deployed."


async def test_a_rejected_call_never_runs_and_the_model_is_told_so():
    model_script = [say("", ("deploy_dashboard", "call_d", DEPLOY)), say("Not deployed.")]
    graph = agent(*model_script)
    config = {"configurable": {"thread_id": "conv-1"}}
    await run(graph, Turn("conv-1"), ask("deploy 7"))
    _, command = resolve(await graph.aget_state(config), "reject")

    after = Turn("conv-1")
    await run(graph, after, command)

    assert RAN == []
    card = after.snapshot()[0]["metadata"]
    assert card["type"] == "tool_error" and card["error"]["code"] == "REJECTED"
    state = await graph.aget_state(config)
    results = [m for m in state.values["messages"] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in results] == ["call_d"] and results[0].status == "error"
    assert closing_messages(state, reason="cancelled") == []  # nothing left open


async def test_a_tool_the_model_made_up_runs_nothing_and_the_model_sees_unknown_tool():
    graph = agent(say("", ("drop_everything", "call_x", {})), say("Sorry."))
    turn = Turn("conv-1")

    await run(graph, turn, ask("go"))

    card = turn.snapshot()[0]["metadata"]
    assert card["type"] == "tool_error" and card["error"]["code"] == "UNKNOWN_TOOL"
    assert RAN == []
