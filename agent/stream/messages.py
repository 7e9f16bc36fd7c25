"""Every message shape of the stream protocol (CONTRACT.md, "Stream protocol"), one typed
constructor each: nothing else in the agent builds a stream message's metadata.

A stream value is the list of the turn's assistant messages `{role, content, metadata}`;
`metadata.type` says what each one is (absent for answer text). The browser's types
(frontend/src/lib/protocol.ts) are pinned to these by tests/agent/unit/test_stream_messages.py.
"""

from typing import Any, Literal, NotRequired, TypedDict

CONFIRM_ALLOWED = ("confirm", "reject")


class ErrorBody(TypedDict):
    code: str
    message: str


class ToolStart(TypedDict):
    type: Literal["tool_start"]
    tool: str
    call_id: str
    input: dict[str, Any]
    title: str
    status: Literal["pending"]


class ToolEnd(TypedDict):
    type: Literal["tool_end"]
    tool: str
    call_id: str
    input: dict[str, Any]
    title: str
    status: Literal["done"]
    output: Any
    duration_ms: int


class ToolError(TypedDict):
    type: Literal["tool_error"]
    tool: str
    call_id: str
    input: dict[str, Any]
    title: str
    status: Literal["done"]
    error: ErrorBody
    duration_ms: int


class ConfirmRequired(TypedDict):
    type: Literal["confirm_required"]
    thread_id: str
    tool: str
    call_id: str
    args: dict[str, Any]
    description: str
    allowed: list[str]
    schema: NotRequired[dict[str, Any]]  # the tool's argument schema: the card's Edit form


class Error(TypedDict):
    type: Literal["error"]
    code: str
    message: str
    details: NotRequired[dict[str, Any]]


class Notice(TypedDict):
    type: Literal["notice"]
    code: str
    message: str
    details: NotRequired[dict[str, Any]]


class WorkflowStep(TypedDict):
    type: Literal["workflow_step"]
    execution_id: int
    step_index: int
    name: str
    step_type: str
    status: Literal["running", "completed", "failed"]
    workflow: str
    title: str
    total_steps: int
    input: NotRequired[Any]
    output: NotRequired[Any]
    error: NotRequired[ErrorBody]
    duration_ms: NotRequired[int]


class Diagnosis(TypedDict):
    type: Literal["diagnosis"]
    run_id: str
    outcome: Literal["draft", "stopped", "failed"]
    progress: dict[str, Any]
    draft: NotRequired[dict[str, Any]]
    stop_reason: NotRequired[str]
    error: NotRequired[ErrorBody]


# Each shape by its `type`, for the test that pins the browser's types.
SHAPES: dict[str, type] = {
    "tool_start": ToolStart,
    "tool_end": ToolEnd,
    "tool_error": ToolError,
    "confirm_required": ConfirmRequired,
    "error": Error,
    "notice": Notice,
    "workflow_step": WorkflowStep,
    "diagnosis": Diagnosis,
}


def tool_start(tool: str, call_id: str, args: dict[str, Any], title: str) -> ToolStart:
    return {
        "type": "tool_start",
        "tool": tool,
        "call_id": call_id,
        "input": args,
        "title": title,
        "status": "pending",
    }


def tool_end(start: ToolStart, output: Any, duration_ms: int) -> ToolEnd:
    """The call's card once it returned (the same message as its start, updated)."""
    return {
        "type": "tool_end",
        "tool": start["tool"],
        "call_id": start["call_id"],
        "input": start["input"],
        "title": start["title"],
        "status": "done",
        "output": output,
        "duration_ms": duration_ms,
    }


def tool_error(start: ToolStart, error: ErrorBody, duration_ms: int) -> ToolError:
    """The call's card once it failed (the same message as its start, updated)."""
    return {
        "type": "tool_error",
        "tool": start["tool"],
        "call_id": start["call_id"],
        "input": start["input"],
        "title": start["title"],
        "status": "done",
        "error": error,
        "duration_ms": duration_ms,
    }


def confirm_required(
    thread_id: str,
    tool: str,
    call_id: str,
    args: dict[str, Any],
    description: str,
    *,
    schema: dict[str, Any] | None = None,
) -> ConfirmRequired:
    shown: ConfirmRequired = {
        "type": "confirm_required",
        "thread_id": thread_id,
        "tool": tool,
        "call_id": call_id,
        "args": args,
        "description": description,
        "allowed": list(CONFIRM_ALLOWED),
    }
    if schema is not None:  # the Edit form is built from it (CONTRACT.md, edited arguments)
        shown["schema"] = schema
    return shown


def error(code: str, message: str, details: dict[str, Any] | None = None) -> Error:
    shown: Error = {"type": "error", "code": code, "message": message}
    if details:
        shown["details"] = details
    return shown


def notice(code: str, message: str, details: dict[str, Any] | None = None) -> Notice:
    shown: Notice = {"type": "notice", "code": code, "message": message}
    if details:
        shown["details"] = details
    return shown


def workflow_step(
    *,
    execution_id: int,
    step_index: int,
    name: str,
    step_type: str,
    workflow: str,
    title: str,
    total_steps: int,
    status: Literal["running", "completed", "failed"] = "running",
) -> WorkflowStep:
    return {
        "type": "workflow_step",
        "execution_id": execution_id,
        "step_index": step_index,
        "name": name,
        "step_type": step_type,
        "workflow": workflow,
        "title": title,
        "total_steps": total_steps,
        "status": status,
    }


def diagnosis(
    *,
    run_id: str,
    outcome: Literal["draft", "stopped", "failed"],
    progress: dict[str, Any],
    draft: dict[str, Any] | None = None,
    stop_reason: str | None = None,
    error: ErrorBody | None = None,
) -> Diagnosis:
    shown: Diagnosis = {
        "type": "diagnosis",
        "run_id": run_id,
        "outcome": outcome,
        "progress": progress,
    }
    if draft is not None:
        shown["draft"] = draft
    if stop_reason is not None:
        shown["stop_reason"] = stop_reason
    if error is not None:
        shown["error"] = error
    return shown
