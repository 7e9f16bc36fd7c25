"""Where a diagnosis run's rules are enforced, inside the framework's own loop.

`RoundBudget` wraps every model round: the rounds and tokens budget is checked before the
model is called (the deadline and a lost lease are the run skeleton's), reported usage is
counted after, and a model that calls a tool once STOP_REQUIRED is in force is stopped
(SATURATED). No retry: a failed round fails the run.

`ProgressProtocol` wraps every tool call: unknown tools, malformed envelopes and protocol
violations get an ERROR observation with a stable code and the business tool does not run;
what runs is recorded in the ledger and its result projected (agent.diagnosis.projection).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command
from pydantic import ValidationError

from agent.backend_client import BackendError
from agent.context import Context
from agent.diagnosis.budget import Budget, RunStopped
from agent.diagnosis.envelope import ENVELOPES, business_input, unknown_keys
from agent.diagnosis.ledger import Ledger, PreviousObservation, Verdict
from agent.diagnosis.projection import error_code, failure
from agent.errors import Code

ToolHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]


class RoundBudget(AgentMiddleware[Any, Context, Any]):
    """Every model round of the run is spent from one budget, checked before the call."""

    def __init__(self, budget: Budget, ledger: Ledger) -> None:
        super().__init__()
        self.budget = budget
        self.ledger = ledger

    async def awrap_model_call(
        self,
        request: ModelRequest[Context],
        handler: Callable[[ModelRequest[Context]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        self.budget.before_round()
        response = await handler(request)
        self.budget.record(response.result)
        if self.ledger.stop is not None and _calls_tools(response):
            raise RunStopped(Code.SATURATED)  # it was told to stop and kept collecting
        return response


def _calls_tools(response: ModelResponse[Any]) -> bool:
    return any(isinstance(m, AIMessage) and m.tool_calls for m in response.result)


class ProgressProtocol(AgentMiddleware[Any, Context, Any]):
    """The progress protocol and the observation whitelist, around every tool call."""

    def __init__(self, ledger: Ledger) -> None:
        super().__init__()
        self.ledger = ledger

    async def awrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> Any:
        call = request.tool_call
        call_id, name = call["id"] or "", call["name"]
        if request.tool is None or name not in ENVELOPES:
            return _observation(call_id, name, failure(call_id, Code.UNKNOWN_TOOL))
        if not _first_of_round(request, call_id):
            return self._refused(call_id, name, self.ledger.violation("ONE_CALL_PER_ROUND"))
        args = call["args"] if isinstance(call["args"], dict) else {}
        previous, malformed = _previous(args.get("previous_observation"))
        verdict = self.ledger.admit(previous, malformed=malformed)
        if not verdict.runs:
            return self._refused(call_id, name, verdict)
        try:
            if unknown_keys(args):
                raise ValueError("unknown keys")
            envelope = ENVELOPES[name].model_validate(args)
        except (ValidationError, ValueError):
            return _observation(call_id, name, failure(call_id, Code.INVALID_ARGUMENTS))
        self.ledger.started(call_id, name, business_input(envelope).model_dump(mode="json"))
        return await self._run(request, handler, call_id, name)

    async def _run(
        self, request: ToolCallRequest, handler: ToolHandler, call_id: str, name: str
    ) -> ToolMessage:
        try:
            result = await handler(request)
        except BackendError as exc:
            code = error_code(exc)
            self.ledger.finished(call_id, "ERROR", code)
            return _observation(call_id, name, failure(call_id, code))
        if not isinstance(result, ToolMessage) or not isinstance(result.artifact, dict):
            self.ledger.finished(call_id, "ERROR", Code.TOOL_FAILED)
            return _observation(call_id, name, failure(call_id, Code.TOOL_FAILED))
        self.ledger.finished(call_id, result.artifact["evidence_status"])
        return result

    def _refused(self, call_id: str, name: str, verdict: Verdict) -> ToolMessage:
        code = verdict.code or "STOP_REQUIRED"
        extra = {"expected_tool_call_id": verdict.expected} if verdict.expected else {}
        return _observation(call_id, name, failure(call_id, code, **extra))


def _first_of_round(request: ToolCallRequest, call_id: str) -> bool:
    """Whether this is the first tool call of the model message that asked for it."""
    messages = (request.state or {}).get("messages") or []
    for message in reversed(messages):
        if isinstance(message, AIMessage) and message.tool_calls:
            return message.tool_calls[0].get("id") == call_id
    return True


def _previous(raw: Any) -> tuple[PreviousObservation | None, bool]:
    """The call's assessment of the previous observation, and whether it was malformed."""
    if raw is None:
        return None, False
    try:
        return PreviousObservation.model_validate(raw), False
    except ValidationError:
        return None, True


def _observation(call_id: str, name: str, body: dict[str, Any]) -> ToolMessage:
    return ToolMessage(
        content=json.dumps(body, ensure_ascii=False),
        tool_call_id=call_id,
        name=name,
        status="error",
        artifact={"evidence_status": "ERROR", "code": body["code"]},
    )
