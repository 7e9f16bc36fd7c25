"""The built-in offline demo model, used when LLM_API_BASE is unset: a deterministic chat model
that routes common Russian and English requests to the agent's tools, summarises their results,
and says it is a demo model."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    UsageMetadata,
)
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from agent.demo import answers, charts, diagnosis, names, repair, workflow
from agent.demo.plan import steps
from agent.demo.request import Memory, Request, Route, is_russian, parse_json, remember, text_of
from agent.demo.routes import Ask, Call, route
from agent.hitl import result_text
from agent.prompts import WORKFLOW_STEP_ID_PREFIX
from agent.tools.names import SEARCH_DASHBOARDS

CHUNK = re.compile(r"\S+\s*|\s+")
DEMO_NOTE = "offline demo model"  # what the app's title and its start-up warning call it


def _is_step(messages: Sequence[BaseMessage]) -> bool:
    """Whether this call is a workflow's `llm_call` step (the engine marks its question so)."""
    return bool(messages) and str(messages[-1].id or "").startswith(WORKFLOW_STEP_ID_PREFIX)


def _tool_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _last_human(messages: Sequence[BaseMessage]) -> int | None:
    return next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)),
        None,
    )


def _tool_name(tool: Any) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    return str(convert_to_openai_tool(tool)["function"]["name"])


def _route(
    step: str, memory: Memory, messages: Sequence[BaseMessage], after: list[BaseMessage]
) -> Route:
    """A step's call: a repair walk's step from what this turn's results said (repair.py)."""
    if step not in repair.STEPS:
        return route(Request(raw=step, text=step.lower(), memory=memory))
    walk: dict[str, Any] = {}
    for message in after:
        if isinstance(message, ToolMessage) and message.name:
            repair.learn(walk, message.name, parse_json(message))
    whole = remember(list(messages))
    return repair.route(Request(raw=step, text=step, memory=whole), walk)


def _calling(routed: Call) -> AIMessage:
    call = {"name": routed.name, "args": routed.args, "id": _tool_call_id()}
    return AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])


class DemoChatModel(BaseChatModel):
    """A deterministic stand-in for an LLM: a tool call per step of the request (one after the
    other), then a short summary."""

    words_per_chunk: int = 3
    """How many words each streamed text chunk carries."""
    chunk_delay_s: float = 0.0
    """Pause between streamed chunks (0 in tests; a little makes a demo look alive)."""
    tool_names: tuple[str, ...] | None = None
    """The tools bound with bind_tools; None until bound (then every routed tool is allowed)."""
    tool_specs: tuple[dict[str, Any], ...] = ()
    """Their definitions in the OpenAI format (what a debug record shows as offered)."""

    @property
    def _llm_type(self) -> str:
        return "agent-chat-demo"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """A copy that only calls the named tools (routing falls back to help for others)."""
        specs = tuple(convert_to_openai_tool(t) for t in tools)
        return self.model_copy(
            update={"tool_names": tuple(_tool_name(t) for t in tools), "tool_specs": specs}
        )

    @property
    def _identifying_params(self) -> dict[str, Any]:
        """The invocation parameters callbacks see: the model's name and the bound tools."""
        return {"model_name": "agent-chat-demo", "tools": list(self.tool_specs)}

    def respond(self, messages: Sequence[BaseMessage], *, step: bool = False) -> AIMessage:
        """The whole answer to `messages`: a tool call (the next step of the request), a
        summary of the results, a question or help; for a workflow's `llm_call` step (`step`),
        what the step was given."""
        if step:
            return AIMessage(content=workflow.respond(messages))
        if diagnosis.is_diagnosis(messages):
            return diagnosis.respond(messages)
        human = _last_human(messages)
        text = text_of(messages[human]) if human is not None else ""
        lang = "ru" if is_russian(text) else "en"
        before = list(messages[:human])
        after = list(messages[human + 1 :]) if human is not None else list(messages)
        walk = repair.steps(text, remember(list(messages)).dashboard_id)
        if walk:  # "fix the failing chart of dashboard N" (repair.py)
            return self._repair(walk, before, after, messages, text, lang)
        plan = steps(text, remember(before))
        first = Request(raw=plan[0], text=plan[0].lower(), memory=remember(before))
        routed = route(first)
        lookup = names.lookup(first, routed) if len(plan) == 1 else None
        if lookup is not None and not self._allowed(SEARCH_DASHBOARDS):
            lookup = None
        if messages and isinstance(messages[-1], ToolMessage):
            if lookup is not None and names.is_lookup(after, lookup):
                return self._after_lookup(lookup, plan[0], before, after, text, lang)
            if routed is None:  # the help's own search: name dashboards that exist
                return AIMessage(content=answers.help_text(lang, names.found(after)))
            following = self._next_step(plan, before, after, messages)
            return following or AIMessage(content=self._summarise(after, text, lang))
        if lookup is not None:
            return _calling(lookup)
        if isinstance(routed, Ask):
            return AIMessage(content=answers.question(routed.topic, lang))
        if isinstance(routed, Call) and self._allowed(routed.name):
            return _calling(routed)
        if routed is None and self._allowed(SEARCH_DASHBOARDS):
            return _calling(Call(SEARCH_DASHBOARDS, {}))
        return AIMessage(content=answers.help_text(lang))

    def _repair(
        self,
        walk: list[str],
        before: list[BaseMessage],
        after: list[BaseMessage],
        messages: Sequence[BaseMessage],
        text: str,
        lang: str,
    ) -> AIMessage:
        """A repair walk's next call (health, the chart's SQL, branch, fix), then the answer."""
        if messages and isinstance(messages[-1], ToolMessage):
            following = self._next_step(walk, before, after, messages)
            return following or AIMessage(content=self._summarise(after, text, lang))
        routed = _route(walk[0], remember(before), messages, after)
        if isinstance(routed, Ask):
            return AIMessage(content=answers.question(routed.topic, lang))
        if isinstance(routed, Call) and self._allowed(routed.name):
            return _calling(routed)
        return AIMessage(content=answers.help_text(lang))

    def _after_lookup(
        self,
        lookup: Call,
        step: str,
        before: list[BaseMessage],
        after: list[BaseMessage],
        text: str,
        lang: str,
    ) -> AIMessage:
        """The dashboard the lookup found, acted on; once that is done, the answer."""
        calls = [m for m in after if isinstance(m, AIMessage) and m.tool_calls]
        found = after[1] if len(after) > 1 else after[-1]
        chosen, items = names.match(found, text) if isinstance(found, ToolMessage) else (None, [])
        if len(calls) > 1 and chosen is not None:  # the named dashboard's result is in
            answer = self._summarise(after[2:], text, lang)
            return AIMessage(content=answer.replace(f"#{chosen['id']}", names.named(chosen)))
        if len(calls) > 1 or not isinstance(found, ToolMessage) or found.status == "error":
            return AIMessage(content=self._summarise(after, text, lang))
        if chosen is None:
            words = str(lookup.args["query"])
            return AIMessage(content=answers.LABEL + names.not_found(words, items, lang))
        named = names.with_id(step, int(chosen["id"]))
        routed = route(Request(raw=named, text=named.lower(), memory=remember(before)))
        if isinstance(routed, Ask):
            return AIMessage(content=answers.question(routed.topic, lang))
        if (
            isinstance(routed, Call)
            and routed.name != SEARCH_DASHBOARDS
            and self._allowed(routed.name)
        ):
            return _calling(routed)
        return AIMessage(content=self._summarise(after, text, lang))

    def _next_step(
        self,
        plan: list[str],
        before: list[BaseMessage],
        after: list[BaseMessage],
        messages: Sequence[BaseMessage],
    ) -> AIMessage | None:
        """The call of the request's next step, if one is left and the last step worked."""
        done = sum(1 for m in after if isinstance(m, AIMessage) and m.tool_calls)
        failed = isinstance(after[-1], ToolMessage) and after[-1].status == "error"
        if done >= len(plan) or failed:
            return None
        step = plan[done]
        routed = _route(step, remember([*before, *after]), messages, after)
        if isinstance(routed, Call) and self._allowed(routed.name):
            return _calling(routed)
        return None

    def _allowed(self, name: str) -> bool:
        return self.tool_names is None or name in self.tool_names

    def _summarise(self, turn: Sequence[BaseMessage], text: str, lang: str) -> str:
        """Every tool result of this turn, in order, a line or a few each; a chart request
        ("... as a chart") is answered with its rows drawn."""
        results = [m for m in turn if isinstance(m, ToolMessage)]
        lines = [
            answers.summary(
                m.name or "tool", result_text(text_of(m)), failed=m.status == "error", lang=lang
            )
            for m in results
        ]
        drawn = charts.for_results(results, text, lang)  # "... as a chart": the rows, drawn
        return answers.LABEL + (drawn or "\n\n".join(lines))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self.respond(messages, step=_is_step(messages))
        output = json.dumps(message.tool_calls) if message.tool_calls else str(message.content)
        message.usage_metadata = self._usage(messages, output)
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self.respond(messages, step=_is_step(messages))
        output = json.dumps(message.tool_calls) if message.tool_calls else str(message.content)
        message.usage_metadata = self._usage(messages, output)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _chunks(self, messages: list[BaseMessage], *, step: bool) -> Iterator[AIMessageChunk]:
        """The answer as streaming chunks: text a few words at a time, or one tool-call
        chunk whose JSON arguments arrive in two deltas; usage on the last chunk."""
        message = self.respond(messages, step=step)
        if message.tool_calls:
            call = message.tool_calls[0]
            args = json.dumps(call["args"], ensure_ascii=False)
            half = len(args) // 2
            yield AIMessageChunk(
                content="",
                tool_call_chunks=[
                    tool_call_chunk(name=call["name"], args=args[:half], id=call["id"], index=0)
                ],
            )
            yield AIMessageChunk(
                content="",
                tool_call_chunks=[tool_call_chunk(args=args[half:], index=0)],
                usage_metadata=self._usage(messages, args),
            )
            return
        words = CHUNK.findall(str(message.content))
        for start in range(0, len(words), self.words_per_chunk):
            piece = "".join(words[start : start + self.words_per_chunk])
            last = start + self.words_per_chunk >= len(words)
            usage = self._usage(messages, str(message.content)) if last else None
            yield AIMessageChunk(content=piece, usage_metadata=usage)

    @staticmethod
    def _usage(messages: list[BaseMessage], output: str) -> UsageMetadata:
        """Rough token counts (4 characters a token), so budgets see plausible usage."""
        input_tokens = sum(len(text_of(m)) for m in messages) // 4 + 1
        output_tokens = len(output) // 4 + 1
        return {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        }

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for message in self._chunks(messages, step=_is_step(messages)):
            chunk = ChatGenerationChunk(message=message)
            if run_manager:
                run_manager.on_llm_new_token(str(message.content), chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for index, message in enumerate(self._chunks(messages, step=_is_step(messages))):
            if index and self.chunk_delay_s:
                await asyncio.sleep(self.chunk_delay_s)
            chunk = ChatGenerationChunk(message=message)
            if run_manager:
                await run_manager.on_llm_new_token(str(message.content), chunk=chunk)
            yield chunk
