"""The agent graph's answer, streamed into the turn: the engine the `dynamic` and `none` kinds
run (agent/runs/kinds/). The tokens reach the turn by callback (agent/stream/events.py
AnswerText); each step's messages by the graph's `updates` stream; a confirmation the graph
asks for is shown last. A stopped run's open calls are closed and its partial answer kept.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.errors import GraphRecursionError
from langgraph.types import Command, Durability, StreamMode

from agent import hitl
from agent.checkpoints import StoreUnavailable
from agent.errors import BudgetExhausted, LlmFailure
from agent.runs.state import Run
from agent.stream import AnswerText, apply

# Each step's messages; the answer's tokens come by callback (agent/stream/events.py, AnswerText).
STREAM_MODE: StreamMode = "updates"
# Each step's checkpoint is stored before the next step starts: a tool runs only once the model
# turn that called it is in Postgres, so a process killed mid-tool leaves a call that the next
# run closes as cancelled, never one that ran but was forgotten (bench/durability.py: cost).
DURABILITY: Durability = "sync"


async def answer(run: Run, graph_input: Command[Any] | dict[str, Any]) -> None:
    """Stream the graph's answer to `graph_input` into the run's turn; a failure of the engine
    the run goes on after (the model, the store, the call budgets) is shown as the turn's
    error. The deadline, a lost lease and the daily budget end it in the skeleton."""
    pending: list[hitl.Pending] = []
    config = run.config_with(AnswerText(run.turn))
    try:
        async for update in run.agent.astream(
            graph_input,
            config,
            context=run.context,
            stream_mode=STREAM_MODE,
            durability=DURABILITY,
        ):
            pending.extend(apply(run.turn, update))
            run.check()
    except (LlmFailure, StoreUnavailable) as exc:
        run.turn.fail(exc)
    except (ModelCallLimitExceededError, GraphRecursionError):
        run.turn.fail(BudgetExhausted("This request used up its model-call budget."))
    if pending:  # its card's Edit form is built from the tool's argument schema
        schema = hitl.argument_schema(run.tools.get(pending[0].tool))
        run.turn.confirm(dataclasses.replace(pending[0], schema=schema))


async def close_open_calls(run: Run) -> None:
    """Give every open tool call a 'cancelled' result and keep the partial answer.

    Order matters: results close the last AI turn; the question, if the run stopped before
    it was stored, comes after them (as in the input); the partial answer comes last.
    """
    snapshot = await run.agent.aget_state(run.config)
    messages = hitl.closing_messages(snapshot, reason="cancelled")
    for message in messages:
        if isinstance(message, ToolMessage) and run.turn.is_open(message.tool_call_id):
            run.turn.tool_result(message)
    stored = {m.id for m in (snapshot.values or {}).get("messages", [])}
    if run.human is not None and run.human.id not in stored:
        messages.append(run.human)
    if partial := run.turn.open_text():
        messages.append(AIMessage(content=partial, id=str(uuid.uuid4())))
    if messages:
        node = "tools" if any(isinstance(m, ToolMessage) for m in messages) else "model"
        await run.write_thread(messages, as_node=node)
