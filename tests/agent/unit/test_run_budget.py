"""RunBudget: the run's model- and tool-call budgets, with no graph node of its own.

A scripted chat model and an in-memory checkpointer: no processes, milliseconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import Context
from agent.marks import ends_out_of_tool_budget
from agent.middleware import RunBudget

RAN: list[int] = []


@tool
def look(n: int) -> str:
    """Look at item n."""
    RAN.append(n)
    return f"item {n}"


class Scripted(FakeMessagesListChatModel):
    """Answers with its `responses` in order; accepts tools as a real chat model does."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Scripted:  # type: ignore[override]
        return self


def calls(*ns: int) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": "look", "args": {"n": n}, "id": f"c{n}"} for n in ns],
    )


def agent(responses: list[BaseMessage], *, models: int = 3, tools: int = 2) -> Any:
    return create_agent(
        Scripted(responses=responses),
        [look],
        middleware=[RunBudget(max_model_calls=models, max_tool_calls=tools)],
        checkpointer=InMemorySaver(),
        context_schema=Context,
    )


def context() -> Context:
    return Context(user_token="t", user_id="1", username="u", roles=(), conversation_id="c")


def run(graph: Any, ctx: Context, thread: str = "t1") -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    return asyncio.run(graph.ainvoke({"messages": [HumanMessage("go")]}, config, context=ctx))


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def test_calls_within_both_budgets_run_and_are_counted_in_the_runs_context() -> None:
    ctx = context()
    result = run(agent([calls(1), calls(2), AIMessage("done")]), ctx)

    assert RAN == [1, 2]
    assert result["messages"][-1].text == "done"
    assert (ctx.spent.model_calls, ctx.spent.tool_calls) == (3, 2)


def test_a_model_turn_past_the_tool_budget_runs_none_of_its_calls_and_ends_the_run() -> None:
    ctx = context()
    result = run(agent([calls(1), calls(2, 3), AIMessage("never asked")]), ctx)

    messages = result["messages"]
    assert RAN == [1]  # the second turn's two calls would pass the budget of 2: neither ran
    assert ends_out_of_tool_budget(messages[-1])
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert set(results) == {"c1", "c2", "c3"}  # every call has its result: a valid thread
    assert results["c2"].status == "error" and "NOT_EXECUTED" in str(results["c2"].content)
    assert ctx.spent.model_calls == 2  # the run ended; the model was not asked again


def test_past_the_model_call_budget_the_next_call_raises_before_reaching_the_model() -> None:
    ctx = context()
    graph = agent([calls(1), calls(2), calls(3), AIMessage("never")], models=2, tools=10)

    with pytest.raises(ModelCallLimitExceededError):
        run(graph, ctx)
    assert RAN == [1, 2] and ctx.spent.model_calls == 2


def test_each_run_has_its_own_budget() -> None:
    graph = agent([calls(1), AIMessage("a"), calls(2), AIMessage("b")], models=2, tools=1)

    run(graph, context(), "t1")
    second = run(graph, context(), "t2")  # a fresh Context: the first run's spending is not its

    assert RAN == [1, 2] and second["messages"][-1].text == "b"
