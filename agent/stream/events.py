"""The events that update a turn: the agent's `updates` stream (a model or tool step's
messages, an interrupt) through `apply`, and the answer's text token by token through the
model's callbacks (`AnswerText`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk, LLMResult

from agent.errors import BudgetExhausted
from agent.hitl import Pending
from agent.marks import RETRY_EVENT, ends_out_of_tool_budget
from agent.stream.turn import Turn

MODEL_NODE = "model"  # create_agent's node that calls the model


class AnswerText(BaseCallbackHandler):
    """The model node's answer text, token by token, written into `turn` as it arrives.

    A handler of the run's own, inline and synchronous (no task, no coroutine per token): a
    token reaches the turn from the model's stream directly, instead of through the graph's
    `messages` stream (a queue, and a wake of the graph's loop and of the consumer per token).
    `then` runs after each piece. The retry event (LlmRetry's, sent before it calls the model
    again) withdraws the text of the failed attempt, in order with the tokens either side.
    """

    run_inline = True
    ignore_chain = True  # model events and the retry event only
    ignore_agent = True
    ignore_retriever = True
    ignore_retry = True

    def __init__(self, turn: Turn, then: Callable[[], None] = lambda: None) -> None:
        self.turn = turn
        self.then = then
        self._calls: set[UUID] = set()  # model calls of the agent's model node, not a tool's

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if (metadata or {}).get("langgraph_node") == MODEL_NODE:
            self._calls.add(run_id)

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        if run_id not in self._calls or not isinstance(chunk, ChatGenerationChunk):
            return
        if isinstance(chunk.message, AIMessageChunk):
            self.turn.text(chunk.message.id, chunk.message.text)
            self.then()

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self._calls.discard(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._calls.discard(run_id)

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if name == RETRY_EVENT:
            self.turn.drop_text()


def apply(turn: Turn, data: dict[str, Any]) -> list[Pending]:
    """Apply one `updates` event of the agent's stream to `turn`; the confirmations it
    raised."""
    pending: list[Pending] = []
    for node, update in data.items():
        if node == "__interrupt__":
            pending.extend(p for p in map(Pending.from_interrupt, update) if p is not None)
            continue
        for message in _messages(update):
            if isinstance(message, ToolMessage):
                turn.tool_result(message)
            elif ends_out_of_tool_budget(message):
                turn.fail(BudgetExhausted("This request used up its tool-call budget."))
            elif isinstance(message, AIMessage) and node == MODEL_NODE:
                turn.model_message(message)
    return pending


def _messages(update: Any) -> Iterable[BaseMessage]:
    if isinstance(update, dict):
        messages = update.get("messages") or []
        return [m for m in messages if isinstance(m, BaseMessage)]
    return []
