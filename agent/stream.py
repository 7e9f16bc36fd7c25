"""This turn's assistant messages as the stream protocol shows them (CONTRACT.md), built from
the agent's `updates` stream events (a model or tool step's messages, an interrupt) and, for the
answer's text token by token, from the model's callbacks (`AnswerText`).

Every snapshot is a fresh list of fresh dicts: Gradio diffs each yielded value against the
previous one, so nothing it holds may change afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk, LLMResult

from agent.errors import Code
from agent.hitl import Pending, result_text
from agent.middleware import RETRY_EVENT, ends_out_of_tool_budget
from agent.tools.names import CONFIRM_TOOLS, title

MAX_OUTPUT_CHARS = 50_000
MODEL_NODE = "model"  # create_agent's node that calls the model
MIN_INTERVAL_S = 0.05  # at most ~20 updates a second per stream ...
FULL_RATE_STREAMS = 20  # ... while at most this many stream at once; then fewer, see _Pace
MAX_INTERVAL_S = 0.25


@dataclass
class _Entry:
    metadata: dict[str, Any]
    parts: list[str] = field(default_factory=list)

    @property
    def content(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


class Turn:
    """The assistant messages of one submit, updated in place as events arrive."""

    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        self.entries: list[_Entry] = []
        self.version = 0
        self.changed = asyncio.Event()
        self.urgent = asyncio.Event()  # a card changed: show it now, do not coalesce
        self.finished = False
        self.message_id: int | None = None  # the assistant history row, once it is saved
        self._text_open = False  # the last entry holds the text of an unfinished model call
        self._text_id: str | None = None  # ... of this model call
        self._cards: dict[str, int] = {}
        self._calls: dict[str, ToolCall] = {}
        self._started: dict[str, float] = {}
        self.on_first_output: list[Callable[[], None]] = []  # run hooks: the first text or card

    def _touch(self, *, urgent: bool = True) -> None:
        if self.version == 0 and self.on_first_output:
            for hook in self.on_first_output:
                hook()
        self.version += 1
        self.changed.set()
        if urgent:
            self.urgent.set()

    def _add(self, content: str, metadata: dict[str, Any]) -> int:
        self.entries.append(_Entry(metadata=metadata, parts=[content] if content else []))
        self._text_open = False
        self._touch()
        return len(self.entries) - 1

    def text(self, run_id: str | None, delta: str) -> None:
        """Append streamed text of model call `run_id` (a new call starts a new message)."""
        if not delta:
            return
        if not self._text_open or self._text_id != run_id:
            self._add("", {})
            self._text_open, self._text_id = True, run_id
        self.entries[-1].parts.append(delta)
        self._touch(urgent=False)

    def drop_text(self) -> None:
        """Forget the text of a model call that failed and is being retried."""
        if self._text_open:
            self.entries.pop()
            self._text_open = False
            self._touch()

    def model_message(self, message: AIMessage) -> None:
        """A finished model call: fix its text (if not streamed) and start its tool cards."""
        if message.text and not (self._text_open and self._text_id == message.id):
            self.text(message.id, message.text)
        self._text_open = False
        for call in message.tool_calls:
            self._calls[call["id"] or ""] = call
            if call["name"] not in CONFIRM_TOOLS:
                self.tool_start(call)

    def tool_start(self, call: ToolCall) -> None:
        call_id = call["id"] or ""
        self._calls[call_id] = call
        self._started[call_id] = time.monotonic()
        metadata = {
            "type": "tool_start",
            "tool": call["name"],
            "call_id": call_id,
            "input": call["args"],
            "title": title(call["name"]),
            "status": "pending",
        }
        self._cards[call_id] = self._add("", metadata)

    def tool_result(self, message: ToolMessage) -> None:
        """Turn the call's card into `tool_end` or `tool_error` (creating it if never shown)."""
        call_id = message.tool_call_id
        if call_id not in self._cards:
            known = self._calls.get(call_id)
            name = known["name"] if known else (message.name or "tool")
            self.tool_start(ToolCall(name=name, args=known["args"] if known else {}, id=call_id))
        index = self._cards[call_id]
        base = dict(self.entries[index].metadata)
        shown = result_text(message.content)  # an edited call's result, without the model's note
        if shown is not message.content:
            message = message.model_copy(update={"content": shown})
        base.update(status="done", duration_ms=_elapsed_ms(self._started.get(call_id)))
        if message.status == "error":
            base.update(type="tool_error", error=_error_of(message))
        else:
            base.update(type="tool_end", output=_output_of(message.content))
        self.entries[index] = _Entry(metadata=base)
        self._text_open = False
        self._touch()

    def is_open(self, call_id: str) -> bool:
        """Whether the call's card still shows it running."""
        index = self._cards.get(call_id)
        return index is not None and self.entries[index].metadata.get("status") == "pending"

    def confirm(self, pending: Pending) -> None:
        self._add(pending.description, pending.metadata(self.thread_id))

    def error(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        metadata: dict[str, Any] = {"type": "error", "code": code, "message": message}
        if details:
            metadata["details"] = details
        self._add(message, metadata)

    def notice(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        metadata: dict[str, Any] = {"type": "notice", "code": code, "message": message}
        if details:
            metadata["details"] = details
        self._add(message, metadata)

    def card(self, metadata: dict[str, Any], content: str = "") -> int:
        """Add a message of our own kind (e.g. a workflow step); its index for `update`."""
        return self._add(content, metadata)

    def update(self, index: int, metadata: dict[str, Any], content: str | None = None) -> None:
        """Replace the metadata (and, when given, the content) of message `index`."""
        parts = [content] if content else ([] if content is not None else self.entries[index].parts)
        self.entries[index] = _Entry(metadata=metadata, parts=list(parts))
        self._text_open = False
        self._touch()

    def card_text(self, index: int, delta: str) -> None:
        """Stream text into message `index` (coalesced like answer text)."""
        if delta:
            self.entries[index].parts.append(delta)
            self._touch(urgent=False)

    def diagnosis(self, metadata: dict[str, Any], content: str = "") -> None:
        """The outcome of a diagnosis run (metadata type `diagnosis`)."""
        self._add(content, metadata)

    def identify(self, message_id: int) -> None:
        """Every message from now on carries `metadata.message_id` (its debug record's key)."""
        self.message_id = message_id
        self._touch()

    def finish(self) -> None:
        self.finished = True
        self.changed.set()
        self.urgent.set()

    def open_text(self) -> str:
        """Text streamed by a model call that has not finished (lost if the run stops now)."""
        return self.entries[-1].content if self._text_open else ""

    def snapshot(self) -> list[dict[str, Any]]:
        extra = {} if self.message_id is None else {"message_id": self.message_id}
        return [
            {"role": "assistant", "content": e.content, "metadata": {**e.metadata, **extra}}
            for e in self.entries
        ]

    def record(self) -> tuple[str, dict[str, Any]]:
        """(content, metadata) of the history entry persisting this turn."""
        parts = self.snapshot()
        text = "\n\n".join(p["content"] for p in parts if not p["metadata"] and p["content"])
        return text, {"parts": parts}


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
                turn.error(Code.BUDGET_EXHAUSTED, "This request used up its tool-call budget.")
            elif isinstance(message, AIMessage) and node == MODEL_NODE:
                turn.model_message(message)
    return pending


def _messages(update: Any) -> Iterable[BaseMessage]:
    if isinstance(update, dict):
        messages = update.get("messages") or []
        return [m for m in messages if isinstance(m, BaseMessage)]
    return []


def _elapsed_ms(started: float | None) -> int:
    return 0 if started is None else int((time.monotonic() - started) * 1000)


def _output_of(content: Any) -> Any:
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    if len(text) > MAX_OUTPUT_CHARS:
        return {"truncated": True, "preview": text[:MAX_OUTPUT_CHARS]}
    try:
        return json.loads(text)
    except ValueError:
        return text


def _error_of(message: ToolMessage) -> dict[str, str]:
    if message.additional_kwargs.get("lc_source") == "hitl_interrupt_decision":
        return {"code": Code.REJECTED, "message": "Not run: the person rejected this call."}
    try:
        error = json.loads(str(message.content))["error"]
        return {"code": str(error["code"]), "message": str(error["message"])}
    except (ValueError, KeyError, TypeError):
        return {"code": Code.TOOL_ERROR, "message": str(message.content)[:300]}


class _Pace:
    """How often each stream of this process may show new text.

    Every update costs the process about the same CPU (Gradio diffs, stores and sends it), so
    past FULL_RATE_STREAMS open streams the interval grows with their number (up to
    MAX_INTERVAL_S): text arrives in larger pieces instead of every first token waiting
    behind everyone's updates. The first update of a stream and cards are never held back.
    """

    def __init__(self) -> None:
        self.open = 0

    def interval(self) -> float:
        crowd = max(1.0, self.open / FULL_RATE_STREAMS)
        return min(MAX_INTERVAL_S, MIN_INTERVAL_S * crowd)


PACE = _Pace()


async def updates(turn: Turn) -> AsyncIterator[list[dict[str, Any]]]:
    """Snapshots of `turn` as it changes, the last always.

    Text is coalesced to at most one snapshot per `PACE.interval()`; a card that starts, ends
    or asks for confirmation is shown at once.
    """
    sent, last = -1, 0.0
    PACE.open += 1
    try:
        while True:
            if turn.version != sent and (turn.entries or turn.finished):
                wait = PACE.interval() - (time.monotonic() - last)
                if sent >= 0 and wait > 0 and not turn.finished and not turn.urgent.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(turn.urgent.wait(), wait)
                turn.urgent.clear()
                sent, last = turn.version, time.monotonic()
                yield turn.snapshot()
                continue
            if turn.finished:
                return
            turn.changed.clear()
            await turn.changed.wait()
    finally:
        PACE.open -= 1
