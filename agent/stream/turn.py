"""This turn's assistant messages as the stream protocol shows them (CONTRACT.md): the state
the events (events.py) update and the stream (updates.py) shows, each message built by its
constructor (messages.py).

Every snapshot is a fresh list of fresh dicts: Gradio diffs each yielded value against the
previous one, so nothing it holds may change afterwards.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.messages import AIMessage, ToolCall, ToolMessage

from agent.errors import AgentError, BackendError, Code
from agent.hitl import Pending, result_text
from agent.stream import messages
from agent.tools.names import CONFIRM_TOOLS, title

MAX_OUTPUT_CHARS = 50_000


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
        metadata = messages.tool_start(call["name"], call_id, call["args"], title(call["name"]))
        self._cards[call_id] = self._add("", dict(metadata))

    def tool_result(self, message: ToolMessage) -> None:
        """Turn the call's card into `tool_end` or `tool_error` (creating it if never shown)."""
        call_id = message.tool_call_id
        if call_id not in self._cards:
            known = self._calls.get(call_id)
            name = known["name"] if known else (message.name or "tool")
            self.tool_start(ToolCall(name=name, args=known["args"] if known else {}, id=call_id))
        index = self._cards[call_id]
        start = cast(messages.ToolStart, self.entries[index].metadata)
        elapsed = _elapsed_ms(self._started.get(call_id))
        shown = result_text(message.content)  # an edited call's result, without the model's note
        if shown is not message.content:
            message = message.model_copy(update={"content": shown})
        done: messages.ToolEnd | messages.ToolError
        if message.status == "error":
            done = messages.tool_error(start, _error_of(message), elapsed)
        else:
            done = messages.tool_end(start, _output_of(message.content), elapsed)
        self.entries[index] = _Entry(metadata=dict(done))
        self._text_open = False
        self._touch()

    def is_open(self, call_id: str) -> bool:
        """Whether the call's card still shows it running."""
        index = self._cards.get(call_id)
        return index is not None and self.entries[index].metadata.get("status") == "pending"

    def confirm(self, pending: Pending) -> None:
        metadata = messages.confirm_required(
            self.thread_id,
            pending.tool,
            pending.call_id,
            pending.args,
            pending.description,
            schema=pending.schema,
        )
        self._add(pending.description, dict(metadata))

    def fail(self, exc: AgentError) -> None:
        """Show `exc` as the stream's `error` message: the one place an AgentError is
        rendered. A backend failure shows what it means to a person (BackendError.shown)."""
        if isinstance(exc, BackendError):
            exc = exc.shown()
        self.error(exc.code, exc.message, exc.details or None)

    def error(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        self._add(message, dict(messages.error(code, message, details)))

    def notice(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        self._add(message, dict(messages.notice(code, message, details)))

    def card(self, metadata: messages.WorkflowStep, content: str = "") -> int:
        """Add a workflow step's message; its index for `update`."""
        return self._add(content, dict(metadata))

    def update(
        self, index: int, metadata: messages.WorkflowStep, content: str | None = None
    ) -> None:
        """Replace the metadata (and, when given, the content) of message `index`."""
        parts = [content] if content else ([] if content is not None else self.entries[index].parts)
        self.entries[index] = _Entry(metadata=dict(metadata), parts=list(parts))
        self._text_open = False
        self._touch()

    def card_text(self, index: int, delta: str) -> None:
        """Stream text into message `index` (coalesced like answer text)."""
        if delta:
            self.entries[index].parts.append(delta)
            self._touch(urgent=False)

    def diagnosis(self, metadata: messages.Diagnosis, content: str = "") -> None:
        """The outcome of a diagnosis run (metadata type `diagnosis`)."""
        self._add(content, dict(metadata))

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


def _error_of(message: ToolMessage) -> messages.ErrorBody:
    if message.additional_kwargs.get("lc_source") == "hitl_interrupt_decision":
        return {"code": Code.REJECTED, "message": "Not run: the person rejected this call."}
    try:
        error = json.loads(str(message.content))["error"]
        return {"code": str(error["code"]), "message": str(error["message"])}
    except (ValueError, KeyError, TypeError):
        return {"code": Code.TOOL_ERROR, "message": str(message.content)[:300]}
