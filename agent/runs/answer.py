"""The agent graph's answer, streamed into the turn: the engine the `dynamic` and `none` kinds
run (agent/runs/kinds/), and the evaluation runner's cases (agent/evaluation/runner.py) with
the same budgets, deadline and codes. The tokens reach the turn by callback
(agent/stream/events.py AnswerText); each step's messages by the graph's `updates` stream; a
confirmation the graph asks for is shown last. A stopped run's open calls are closed and its
partial answer kept, for the skeleton to add to the thread.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from typing import Any

from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphRecursionError
from langgraph.types import Command, Durability, StreamMode

from agent import hitl
from agent.checkpoints import StoreUnavailable
from agent.config import Settings
from agent.context import Context
from agent.errors import BudgetExhausted, LlmFailure
from agent.graph import Agent
from agent.runs.result import Question, ThreadWrite
from agent.runs.state import Run
from agent.stream import Show

# Each step's messages; the answer's tokens come by callback (agent/stream/events.py, AnswerText).
STREAM_MODE: StreamMode = "updates"
# Each step's checkpoint is stored before the next step starts: a tool runs only once the model
# turn that called it is in Postgres, so a process killed mid-tool leaves a call that the next
# run closes as cancelled, never one that ran but was forgotten (bench/durability.py: cost).
DURABILITY: Durability = "sync"
OUT_OF_TIME = "This request ran out of time."  # the turn's error past the deadline
MODEL_BUDGET = "This request used up its model-call budget."


def deadline_s(settings: Settings) -> float:
    """How long one answer may take (the skeleton's deadline for `dynamic` and `none`)."""
    return settings.agent.run_deadline_s


async def answer(run: Run, graph_input: Command[Any] | dict[str, Any]) -> None:
    """Stream the graph's answer to `graph_input` into the run's turn; a failure of the engine
    the run goes on after (the model, the store, the call budgets) is shown as the turn's
    error. The deadline, a lost lease and the daily budget end it in the skeleton."""
    config = run.config_with(run.show.answer_text())
    pending = await stream(
        run.agent, graph_input, config, context=run.context, show=run.show, check=run.check
    )
    if pending:  # its card's Edit form is built from the tool's argument schema
        schema = hitl.argument_schema(run.tools.get(pending[0].tool))
        run.show.confirm(dataclasses.replace(pending[0], schema=schema))


async def stream(
    agent: Agent,
    graph_input: Command[Any] | dict[str, Any],
    config: RunnableConfig,
    *,
    context: Context,
    show: Show,
    check: Callable[[], None] = lambda: None,
) -> list[hitl.Pending]:
    """The graph's steps shown as they come (`check` after each); the confirmations it asked
    for. A failure of the model, the store or a call budget is shown as the turn's error."""
    pending: list[hitl.Pending] = []
    try:
        async for update in agent.astream(
            graph_input,
            config,
            context=context,
            stream_mode=STREAM_MODE,
            durability=DURABILITY,
        ):
            pending.extend(show.apply(update))
            check()
    except (LlmFailure, StoreUnavailable) as exc:
        show.fail(exc)
    except (ModelCallLimitExceededError, GraphRecursionError):
        show.fail(BudgetExhausted(MODEL_BUDGET))
    return pending


async def close_open_calls(run: Run, question: Question | None) -> ThreadWrite | None:
    """Give every open tool call a 'cancelled' result and keep the partial answer: what the
    thread needs after a stopped answer (the skeleton writes it).

    Order matters: results close the last AI turn; the question, if the run stopped before
    it was stored, comes after them (as in the input); the partial answer comes last.
    """
    snapshot = await run.agent.aget_state(run.config)
    messages: list[BaseMessage] = list(hitl.closing_messages(snapshot, reason="cancelled"))
    for message in messages:
        if isinstance(message, ToolMessage) and run.show.is_open(message.tool_call_id):
            run.show.tool_result(message)
    stored = {m.id for m in (snapshot.values or {}).get("messages", [])}
    if question is not None and question.human.id not in stored:
        messages.append(question.human)
    if partial := run.show.open_text():
        messages.append(AIMessage(content=partial, id=str(uuid.uuid4())))
    if not messages:
        return None
    node = "tools" if any(isinstance(m, ToolMessage) for m in messages) else "model"
    return ThreadWrite(tuple(messages), node)
