"""Every message shape of the stream protocol (CONTRACT.md, "Stream protocol"), one typed
constructor each: nothing else in the agent builds a stream message's metadata.

The shapes themselves are typed once for both processes in common/stream.py (the backend reads
stored turns through it); the browser's types (frontend/src/lib/protocol.ts) are pinned to them
by tests/agent/unit/test_stream_messages.py.
"""

from typing import Any, Literal

from common.stream import (
    CONFIRM_ALLOWED,
    CONFIRM_REQUIRED,
    DIAGNOSIS,
    ERROR,
    NOTICE,
    SHAPES,
    TOOL_END,
    TOOL_ERROR,
    TOOL_START,
    WORKFLOW_STEP,
    ConfirmRequired,
    Diagnosis,
    Error,
    ErrorBody,
    Notice,
    ToolEnd,
    ToolError,
    ToolStart,
    WorkflowStep,
)

__all__ = [
    "SHAPES",
    "ConfirmRequired",
    "Diagnosis",
    "Error",
    "ErrorBody",
    "Notice",
    "ToolEnd",
    "ToolError",
    "ToolStart",
    "WorkflowStep",
    "confirm_required",
    "diagnosis",
    "error",
    "notice",
    "tool_end",
    "tool_error",
    "tool_start",
    "workflow_step",
]


def tool_start(tool: str, call_id: str, args: dict[str, Any], title: str) -> ToolStart:
    return {
        "type": TOOL_START,
        "tool": tool,
        "call_id": call_id,
        "input": args,
        "title": title,
        "status": "pending",
    }


def tool_end(start: ToolStart, output: Any, duration_ms: int) -> ToolEnd:
    """The call's card once it returned (the same message as its start, updated)."""
    return {
        "type": TOOL_END,
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
        "type": TOOL_ERROR,
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
        "type": CONFIRM_REQUIRED,
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
    shown: Error = {"type": ERROR, "code": code, "message": message}
    if details:
        shown["details"] = details
    return shown


def notice(code: str, message: str, details: dict[str, Any] | None = None) -> Notice:
    shown: Notice = {"type": NOTICE, "code": code, "message": message}
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
        "type": WORKFLOW_STEP,
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
        "type": DIAGNOSIS,
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
