"""Agent middleware of our own: safe tool errors, the model-input budget, and the LLM retry.

The library's HumanInTheLoopMiddleware and call-limit middleware are assembled in graph.py.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import openai
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.callbacks import adispatch_custom_event
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command
from pydantic import BaseModel, ValidationError

from agent.backend_client import BackendError
from agent.context import Context
from agent.errors import Code, LlmFailure, aiohttp_error
from agent.marks import RETRY_EVENT, TOOL_BUDGET_MARK
from agent.prompts import NO_TOOLS_NOTE, focus_note
from agent.trim import fit_to_budget, message_tokens, paired

log = logging.getLogger(__name__)

MAX_ERROR_CHARS = 300
SUPERSET_REFUSALS = frozenset({Code.SUPERSET_LOGIN_REQUIRED, Code.SUPERSET_FORBIDDEN})


def tool_error(request: ToolCallRequest, code: str, message: str) -> ToolMessage:
    """The error observation the model sees: a stable code and a short, safe message."""
    call = request.tool_call
    return ToolMessage(
        content=json.dumps({"error": {"code": code, "message": message}}),
        name=call["name"],
        tool_call_id=call["id"],
        status="error",
    )


def safe_backend_error(exc: BackendError, context: Any) -> tuple[str, str]:
    """(code, message) of a backend refusal as a tool error may show it: no raw body, no token."""
    if exc.status == 403 and exc.code in SUPERSET_REFUSALS:  # person mode: their Superset's word
        return exc.code, exc.message[:MAX_ERROR_CHARS]
    if exc.status == 403:
        roles = ", ".join(context.roles) if isinstance(context, Context) else "unknown"
        detail = exc.message.rstrip(".") if exc.message else "not allowed"
        return Code.FORBIDDEN, f"Permission denied: {detail} (the user's roles: {roles})."
    if exc.status >= 500:
        return exc.code or Code.BACKEND_ERROR, "The platform could not complete this; try later."
    message = exc.message[:MAX_ERROR_CHARS]
    token = getattr(context, "user_token", None)
    if token and token in message:
        message = message.replace(token, "[redacted]")
    return exc.code or Code.BACKEND_ERROR, message


class ToolErrors(AgentMiddleware[Any, Context, Any]):
    """Turn tool failures into error ToolMessages; never run a tool the model made up."""

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        name = request.tool_call["name"]
        if request.tool is None:
            return tool_error(request, Code.UNKNOWN_TOOL, f"There is no tool named {name!r}.")
        try:
            result = await handler(request)
        except GraphBubbleUp:
            raise  # interrupts (confirmations) must reach the graph untouched
        except BackendError as exc:
            return tool_error(request, *safe_backend_error(exc, request.runtime.context))
        except ValidationError as exc:
            return tool_error(request, Code.INVALID_ARGUMENTS, _fields(exc))
        except Exception:
            # Anything else is our bug, not the model's: log the stack here, show a safe line.
            log.exception("tool %s failed", name)
            return tool_error(request, Code.TOOL_FAILED, f"The tool {name} failed unexpectedly.")
        if not isinstance(result, ToolMessage) or result.status != "error":
            return result
        if not _is_error_json(result.content):
            text = str(result.content)[:MAX_ERROR_CHARS]
            return tool_error(request, Code.INVALID_ARGUMENTS, text)
        return result


class ArgumentsFirst(AgentMiddleware[Any, Context, Any]):
    """Check a call's arguments before anything else (a confirmation included): nobody should be
    asked to approve a call that cannot run. No side effects: it re-runs on resume."""

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        schema = request.tool.tool_call_schema if request.tool is not None else None
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            try:
                schema.model_validate(request.tool_call["args"])
            except ValidationError as exc:
                return tool_error(request, Code.INVALID_ARGUMENTS, _fields(exc))
        return await handler(request)


def _fields(exc: ValidationError) -> str:
    fields = ", ".join(".".join(map(str, e["loc"])) or "arguments" for e in exc.errors()[:5])
    return f"Invalid arguments: {fields}"


def _is_error_json(content: Any) -> bool:
    try:
        return isinstance(json.loads(content), dict) and "error" in json.loads(content)
    except (TypeError, ValueError):
        return False


class RunBudget(AgentMiddleware[Any, Context, Any]):
    """The run's model-call and tool-call budgets, counted in its Context (`Context.spent`).

    It wraps the model call and adds no graph node of its own: with durable checkpoints every
    node is a Postgres write, and the library's two limit middlewares added three per model call.
    Past the model-call budget the next call raises ModelCallLimitExceededError (as the library
    does); a model turn whose tool calls would pass the tool-call budget runs none of them: each
    gets a NOT_EXECUTED result and the run ends with an AI message marked TOOL_BUDGET_MARK, so the
    thread stays valid for any provider.
    """

    def __init__(self, *, max_model_calls: int, max_tool_calls: int) -> None:
        super().__init__()
        self.max_model_calls = max_model_calls
        self.max_tool_calls = max_tool_calls

    async def awrap_model_call(
        self,
        request: ModelRequest[Context],
        handler: Callable[[ModelRequest[Context]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        context = request.runtime.context
        if not isinstance(context, Context):
            return await handler(request)
        spent = context.spent
        if spent.model_calls >= self.max_model_calls:
            raise ModelCallLimitExceededError(
                thread_count=spent.model_calls,
                run_count=spent.model_calls,
                thread_limit=None,
                run_limit=self.max_model_calls,
            )
        spent.model_calls += 1
        response = await handler(request)
        calls = [c for m in response.result if isinstance(m, AIMessage) for c in m.tool_calls]
        if spent.tool_calls + len(calls) <= self.max_tool_calls:
            spent.tool_calls += len(calls)
            return response
        message = "Not run: this request used up its tool-call budget."
        blocked = [
            ToolMessage(
                content=json.dumps({"error": {"code": Code.NOT_EXECUTED, "message": message}}),
                name=call["name"],
                tool_call_id=call["id"],
                status="error",
            )
            for call in calls
        ]
        end = AIMessage(
            content="This request used up its tool-call budget.",
            response_metadata={TOOL_BUDGET_MARK: True},
        )
        return ModelResponse(
            result=[*response.result, *blocked, end],
            structured_response=response.structured_response,
        )


class ModelInput(AgentMiddleware[Any, Context, Any]):
    """Add who/what the person is looking at to the system prompt; fit the input to a budget.

    Only the request is changed; the stored conversation stays whole (Story 4.2).
    """

    def __init__(self, *, max_input_tokens: int) -> None:
        super().__init__()
        self.max_input_tokens = max_input_tokens

    async def awrap_model_call(
        self,
        request: ModelRequest[Context],
        handler: Callable[[ModelRequest[Context]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        system = request.system_message
        context = request.runtime.context
        if isinstance(context, Context):
            extra = f"\nThe person's roles: {', '.join(context.roles) or 'none'}."
            extra += focus_note(context.focus)
            system = SystemMessage(content=f"{system.text if system else ''}{extra}")
        budget = self.max_input_tokens - (message_tokens([system]) if system else 0)
        messages: list[AnyMessage] = fit_to_budget(paired(list(request.messages)), max(budget, 200))
        return await handler(request.override(messages=messages, system_message=system))


def _retryable(exc: openai.APIError) -> bool:
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500 or exc.status_code == 429
    return isinstance(exc, openai.APITimeoutError | openai.APIConnectionError)


def _malformed(response: ModelResponse[Any]) -> bool:
    return any(isinstance(m, AIMessage) and m.invalid_tool_calls for m in response.result)


class LlmRetry(AgentMiddleware[Any, Context, Any]):
    """Retry a failed model call once (5xx, 429, timeout, malformed tool call), then LlmFailure."""

    async def awrap_model_call(
        self,
        request: ModelRequest[Context],
        handler: Callable[[ModelRequest[Context]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        for attempt in (1, 2):
            try:
                response = await handler(request)
            except openai.APIError as exc:
                if attempt == 2 or not _retryable(exc):
                    raise llm_failure(exc) from exc
                log.warning("model call failed (%s); retrying once", type(exc).__name__)
            else:
                if not _malformed(response):
                    return response
                if attempt == 2:
                    raise LlmFailure("The model returned a malformed tool call twice.")
                log.warning("model returned a malformed tool call; retrying once")
            # to the run's callbacks, in order with the attempt's streamed tokens (AnswerText)
            await adispatch_custom_event(RETRY_EVENT, {})
        raise AssertionError("unreachable")


def llm_failure(exc: openai.APIError) -> LlmFailure:
    """The one mapping of a model client's error to what a person is shown (LLM_ERROR and a
    sentence without the provider's body): the agent graph's, a workflow step's, a diagnosis's."""
    if isinstance(exc, openai.APIStatusError):
        return LlmFailure(f"The language model answered with an error (HTTP {exc.status_code}).")
    if isinstance(exc, openai.APITimeoutError) and timed_out(exc):
        return LlmFailure("The language model did not answer in time.")
    return LlmFailure("The language model could not be reached.")


def timed_out(exc: BaseException) -> bool:
    """Whether a timeout error really is one (the aiohttp transport's is not always)."""
    cause = aiohttp_error(exc)
    return cause is None or isinstance(cause, TimeoutError)


class ToolSchemas(AgentMiddleware[Any, Context, Any]):
    """Hand the model its tools already in the provider's format (innermost).

    The agent factory binds the request's tools on every model call, and converting a tool
    (its pydantic argument schema to JSON schema) cost about 0.4 ms each, 6 ms a call for the
    catalogue: the conversion is the same every time, so each tool is converted once. What is
    sent is unchanged: a dict in that format is bound as it is. The tools still run from the
    agent's own tool node; the other middleware see the tools as ever.
    """

    def __init__(self) -> None:
        super().__init__()
        self._schemas: dict[int, tuple[BaseTool, dict[str, Any]]] = {}

    def schema(self, tool: BaseTool | dict[str, Any]) -> BaseTool | dict[str, Any]:
        if not isinstance(tool, BaseTool):
            return tool
        known = self._schemas.get(id(tool))
        if known is None or known[0] is not tool:  # kept with its tool: an id is never reused
            known = self._schemas[id(tool)] = (tool, convert_to_openai_tool(tool))
        return known[1]

    async def awrap_model_call(
        self,
        request: ModelRequest[Context],
        handler: Callable[[ModelRequest[Context]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        if not request.tools:
            return await handler(request)
        return await handler(request.override(tools=[self.schema(t) for t in request.tools]))


MAX_FLATTENED_RESULT_CHARS = 2000


class NoTools(AgentMiddleware[Any, Context, Any]):
    """Mode `none` (the run's Context says `offer_tools=False`): the model is offered no tools,
    earlier tool calls and results of the thread reach it as plain text (any provider accepts
    that without tool definitions), and a tool call it returns anyway is dropped, never run."""

    async def awrap_model_call(
        self,
        request: ModelRequest[Context],
        handler: Callable[[ModelRequest[Context]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        context = request.runtime.context
        if not isinstance(context, Context) or context.offer_tools:
            return await handler(request)
        system = request.system_message
        system = SystemMessage(content=f"{system.text if system else ''}\n{NO_TOOLS_NOTE}")
        plain = request.override(
            tools=[], messages=as_plain_text(list(request.messages)), system_message=system
        )
        response = await handler(plain)
        result = [
            m.model_copy(update={"tool_calls": [], "invalid_tool_calls": []})
            if isinstance(m, AIMessage)
            else m
            for m in response.result
        ]
        return ModelResponse(result=result, structured_response=response.structured_response)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        context = request.runtime.context
        if isinstance(context, Context) and not context.offer_tools:
            return tool_error(request, Code.TOOLS_DISABLED, "No tools in this mode; nothing ran.")
        return await handler(request)


def as_plain_text(messages: list[AnyMessage]) -> list[AnyMessage]:
    """The thread with tool calls and their results written out as assistant text."""
    out: list[AnyMessage] = []
    for message in messages:
        if isinstance(message, AIMessage) and message.tool_calls:
            calls = "; ".join(
                f"{c['name']}({json.dumps(c['args'], ensure_ascii=False)[:500]})"
                for c in message.tool_calls
            )
            text = f"{message.text}\n[I called: {calls}]".strip()
            out.append(AIMessage(content=text, id=message.id))
        elif isinstance(message, ToolMessage):
            result = _text_of(message)[:MAX_FLATTENED_RESULT_CHARS]
            out.append(AIMessage(content=f"[Result of {message.name or 'a tool'}: {result}]"))
        else:
            out.append(message)
    return out


def _text_of(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else json.dumps(message.content)
