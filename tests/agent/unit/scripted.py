"""In-process stand-ins for the fast unit tests: a scripted chat model (what the fake LLM server
does over HTTP, without the server), a fake backend client and LangGraph snapshots."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langgraph.types import Interrupt, StateSnapshot


class ScriptedModel(BaseChatModel):
    """Answers each call with the next scripted AIMessage, streamed word by word; records what
    it was sent (`seen`). Tools are accepted and ignored (the script names the calls)."""

    script: list[AIMessage]
    seen: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        return self

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        self.seen.append(list(messages))
        if not self.script:
            raise AssertionError("the model was called more often than scripted")
        return self.script.pop(0)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        answer = self._next(messages)
        for word in _words(answer.text):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=word))
            if run_manager:
                await run_manager.on_llm_new_token(word, chunk=chunk)
            yield chunk
        calls = [
            {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
            for i, c in enumerate(answer.tool_calls)
        ]
        yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=calls))


def _words(text: str) -> Iterator[str]:
    parts = text.split(" ")
    for i, part in enumerate(parts):
        yield part if i == len(parts) - 1 else part + " "


def say(text: str = "", *calls: tuple[str, str, dict[str, Any]]) -> AIMessage:
    """A scripted answer: text and tool calls as (name, id, args)."""
    return AIMessage(
        content=text,
        tool_calls=[{"name": name, "id": cid, "args": args} for name, cid, args in calls],
    )


def approval(call_id: str, tool: str = "deploy_dashboard", **args: Any) -> Interrupt:
    """The interrupt HumanInTheLoopMiddleware raises for one call (per_call mode)."""
    value = {
        "type": "tool_approval",
        "name": tool,
        "tool_call_id": call_id,
        "args": args,
        "description": f"Deploy dashboard {args.get('dashboard_id', '?')}",
    }
    return Interrupt(value=value, id=f"interrupt-{call_id}")


def snapshot(
    messages: list[BaseMessage] | None = None, interrupts: Sequence[Interrupt] = ()
) -> StateSnapshot:
    """A thread's state as `aget_state` returns it; `messages=None` is a thread never run."""
    return StateSnapshot(
        values={} if messages is None else {"messages": messages},
        next=(),
        config={"configurable": {"thread_id": "t"}},
        metadata=None,
        created_at=None if messages is None else "2026-01-01T00:00:00+00:00",
        parent_config=None,
        tasks=(),
        interrupts=tuple(interrupts),
    )


class FakeBackend:
    """What BackendClient.call answers, per path; records each call."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    async def call(self, context: Any, method: str, path: str, **kwargs: Any) -> Any:
        self.calls.append((method, path, kwargs))
        answer = self.answers[path]
        if isinstance(answer, Exception):
            raise answer
        return answer
