"""Capturing the model calls of one turn with a LangChain callback handler.

The handler is in the run's `callbacks`, so it sees every chat-model call of that run: the
agent's rounds, the `none` mode's answer, workflow `llm_call` steps and diagnosis rounds (their
config inherits it). `on_chat_model_start` receives the final message list (system prompt,
focus note, trimmed history, injected resources) and the invocation parameters with the bound
tools; the messages are converted with the function ChatOpenAI itself uses to build the
request body, so the record shows what the provider was sent. No HTTP header passes through
here, so no credential header can be recorded; `Scrubber` removes anything else.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import LLMResult
from langchain_openai.chat_models.base import (
    _convert_from_v1_to_chat_completions,
    _convert_message_to_dict,
)

from agent.callbacks import ModelEvents
from agent.debug.scrub import Scrubber

MAX_CALLS = 50  # per turn; later calls are counted in dropped_calls (the backend's bound too)
MAX_TEXT_CHARS = 8_000  # per string in a message or answer (a long resource, an image's data URL)
MAX_MESSAGES = 60  # per call: the first (the system prompt) and the last ones
MAX_RECORD_BYTES = 1_500_000  # the whole record; the backend refuses more than 2 MB
SHRUNK_TAIL = 4  # messages a call keeps, after its first, when the record is too large
PARAMS_LEFT_OUT = frozenset({"tools", "model", "model_name", "messages"})


def cut(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """`text`, or its start and a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [cut: {len(text) - limit:,} more characters]"


def _bounded(value: Any) -> Any:
    """JSON-safe `value` with every long string cut."""
    if isinstance(value, str):
        return cut(value)
    if isinstance(value, dict):
        return {str(k): _bounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_bounded(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return cut(str(value))


def as_sent(message: BaseMessage) -> dict[str, Any]:
    """The chat-completions form of `message`, as ChatOpenAI puts it in the request body."""
    if isinstance(message, AIMessage):
        message = _convert_from_v1_to_chat_completions(message)
    converted: dict[str, Any] = _convert_message_to_dict(message)
    return converted


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class Call:
    """One model call; `response` and the end time are filled when it ends."""

    request: dict[str, Any]
    run_id: str | None
    source: str
    start_time: str = field(default_factory=_now)
    started: float = field(default_factory=time.monotonic)
    response: dict[str, Any] | None = None
    end_time: str | None = None
    duration_ms: int | None = None

    def end(self, response: dict[str, Any]) -> None:
        self.response = response
        self.end_time = _now()
        self.duration_ms = int((time.monotonic() - self.started) * 1000)

    def as_record(self) -> dict[str, Any]:
        unfinished = {"content": "", "tool_calls": [], "finish_reason": "unfinished"}
        return {
            "run_id": self.run_id,
            "source": self.source,
            "request": self.request,
            "response": self.response or {**unfinished, "usage": None},
            "timing": {
                "start_time": self.start_time,
                "end_time": self.end_time,
                "duration_ms": self.duration_ms,
            },
        }


def _request(
    serialized: dict[str, Any], messages: list[BaseMessage], params: dict[str, Any]
) -> dict[str, Any]:
    tools = list(params.get("tools") or [])
    sent = [as_sent(m) for m in messages]
    omitted = max(0, len(sent) - MAX_MESSAGES)
    if omitted:
        sent = [sent[0], *sent[omitted + 1 :]]
    model = params.get("model") or params.get("model_name") or serialized.get("name")
    kept = {
        k: v
        for k, v in params.items()
        if k not in PARAMS_LEFT_OUT and not k.startswith("_") and v is not None
    }
    return {
        "model": str(model) if model else None,
        "params": _bounded(kept),
        "messages": _bounded(sent),
        "tools": _bounded(tools),
        "omitted_messages": omitted,
    }


def _response(result: LLMResult) -> dict[str, Any]:
    generation = result.generations[0][0] if result.generations and result.generations[0] else None
    message = getattr(generation, "message", None)
    info = (generation.generation_info if generation is not None else None) or {}
    if not isinstance(message, AIMessage):
        text = generation.text if generation is not None else ""
        return {"content": cut(text), "tool_calls": [], "finish_reason": None, "usage": None}
    calls: list[dict[str, Any]] = [
        {"id": c["id"], "name": c["name"], "args": c["args"]} for c in message.tool_calls
    ]
    calls += [
        {"id": c["id"], "name": c["name"], "args": c["args"], "invalid": True}
        for c in message.invalid_tool_calls
    ]
    usage: Any = message.usage_metadata or (result.llm_output or {}).get("token_usage")
    finish = message.response_metadata.get("finish_reason") or info.get("finish_reason")
    return {
        "content": _bounded(message.content),
        "tool_calls": _bounded(calls),
        "finish_reason": finish,
        "usage": _bounded(dict(usage)) if usage else None,
    }


class CallRecorder(ModelEvents):
    """Collects this turn's model calls in the order they started (model events only, inline:
    agent/callbacks.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Call] = []
        self.dropped = 0
        self._open: dict[uuid.UUID, Call] = {}

    async def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if len(self.calls) >= MAX_CALLS:
            self.dropped += 1
            return
        meta = metadata or {}
        diagnosis = meta.get("diagnosis_run_id")
        source = kwargs.get("name") or ("diagnosis" if diagnosis else "chat")
        params = dict(kwargs.get("invocation_params") or {})
        request = _request(serialized or {}, messages[0] if messages else [], params)
        call = Call(request=request, run_id=str(diagnosis) if diagnosis else None, source=source)
        self.calls.append(call)
        self._open[run_id] = call

    async def on_llm_end(self, response: LLMResult, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        if (call := self._open.pop(run_id, None)) is not None:
            call.end(_response(response))

    async def on_llm_error(self, error: BaseException, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        if (call := self._open.pop(run_id, None)) is not None:
            error_info = {"type": type(error).__name__, "message": cut(str(error), 500)}
            call.end(
                {
                    "content": "",
                    "tool_calls": [],
                    "finish_reason": "error",
                    "usage": None,
                    "error": error_info,
                }
            )

    def record(self, scrub: Scrubber) -> dict[str, Any]:
        """The PUT /api/debug/{message_id} body: scrubbed, within MAX_RECORD_BYTES.

        The calls are dumped once; when that shows nothing to scrub and the record is within
        its bound (nearly every turn), they are sent as they are, unwalked and uncopied."""
        calls = [c.as_record() for c in self.calls]
        dumped = json.dumps(calls, default=str)
        if scrub.finds_nothing_in(dumped) and len(dumped.encode()) <= MAX_RECORD_BYTES:
            return {"calls": calls, "dropped_calls": self.dropped}
        calls = [scrub(c) for c in calls]  # copies: shrinking never touches what was recorded
        dropped = self.dropped
        while calls and _size(calls) > MAX_RECORD_BYTES:
            if not _shrink_largest(calls):
                calls.pop()
                dropped += 1
        return {"calls": calls, "dropped_calls": dropped}


def _size(calls: list[dict[str, Any]]) -> int:
    return len(json.dumps(calls, default=str).encode())


def _shrink_largest(calls: list[dict[str, Any]]) -> bool:
    """Keep the first and last few messages of the call with the most; False if none has more."""
    request = max((c["request"] for c in calls), key=lambda r: len(r["messages"]))
    messages = request["messages"]
    if len(messages) <= SHRUNK_TAIL + 1:
        return False
    request["omitted_messages"] += len(messages) - SHRUNK_TAIL - 1
    request["messages"] = [messages[0], *messages[-SHRUNK_TAIL:]]
    return True
