"""Confirmations: the interrupt payload <-> `confirm_required` metadata, decision checks, resume,
and closing tool calls that will never get a result (rejected, cancelled).

A decision is checked against the thread's checkpoint before anything resumes, so a bad or
stale one never reaches the graph: no checkpoint -> CHECKPOINT_EXPIRED, no pending confirmation
-> NO_PENDING_CONFIRMATION, edited arguments the tool's schema refuses -> INVALID_INPUT (the
call stays pending). A confirmation with edited arguments is the library's `edit` decision
(HumanInTheLoopMiddleware, per-call mode): the same tool, the person's arguments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command, Interrupt, StateSnapshot

from agent.errors import AgentError, Code
from agent.tools.calls import InvalidArguments, argument_model, check_arguments
from agent.tools.names import describe_call
from common.stream import DECISION, Decision

Action = Literal["confirm", "reject"]
ALLOWED: list[Action] = ["confirm", "reject"]
DECISIONS: dict[str, dict[str, str]] = {
    "confirm": {"type": "approve"},
    "reject": {"type": "reject"},
}
# The library's decisions a confirmation tool takes: `edit` is a confirm with `options.args`.
DECISION_TYPES: tuple[Literal["approve", "edit", "reject"], ...] = ("approve", "edit", "reject")
# What the model is told, before the result, of a call a person edited (the library adds the
# call that ran and "Tool response:"); `result_text` takes it off again for the card.
EDIT_NOTICE = (
    "Note: the person edited this call's arguments before confirming it. The call recorded in "
    "your message is the one you proposed, not the one that ran. This was intentional and "
    "authorized; do not re-issue your original call."
)
_RESPONSE_MARK = "\n\nTool response:\n"


class ConfirmationError(AgentError):
    """A confirm/reject that cannot be applied; `code` is the stream error code."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message, code=code)


@dataclass(frozen=True)
class Pending:
    """One tool call waiting for a person's decision."""

    interrupt_id: str
    tool: str
    call_id: str
    args: dict[str, Any]
    description: str
    schema: dict[str, Any] | None = None
    """The JSON schema of the tool's arguments, for the card's Edit form (None: not editable)."""

    @classmethod
    def from_interrupt(cls, item: Interrupt) -> Pending | None:
        value = item.value
        if not isinstance(value, dict) or value.get("type") != "tool_approval":
            return None
        return cls(
            interrupt_id=item.id,
            tool=str(value["name"]),
            call_id=str(value["tool_call_id"]),
            args=dict(value.get("args") or {}),
            description=str(value.get("description") or f"Run {value['name']}"),
        )

    @classmethod
    def from_record(cls, value: dict[str, Any]) -> Pending | None:
        """A call stored as JSON (a workflow step waiting for confirmation)."""
        try:
            return cls(
                interrupt_id="",
                tool=str(value["tool"]),
                call_id=str(value["call_id"]),
                args=dict(value.get("args") or {}),
                description=str(value.get("description") or f"Run {value['tool']}"),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def record(self) -> dict[str, Any]:
        """The JSON `from_record` reads back."""
        return {
            "tool": self.tool,
            "call_id": self.call_id,
            "args": self.args,
            "description": self.description,
        }


def argument_schema(tool: BaseTool | None) -> dict[str, Any] | None:
    """The JSON schema of `tool`'s arguments as the model sees them; None if it has none."""
    model = argument_model(tool)
    return model.model_json_schema() if model is not None else None


def checked_edit(pending: Pending, args: dict[str, Any], tool: BaseTool | None) -> dict[str, Any]:
    """`args` if they are a valid call of the pending tool (agent/tools/calls.py
    `check_arguments`, the one check), else INVALID_INPUT. Nothing of the values is echoed."""
    if argument_model(tool) is None or tool is None or tool.name != pending.tool:
        raise ConfirmationError(Code.INVALID_INPUT, "This call's arguments cannot be edited.")
    try:
        check_arguments(tool, args)
    except InvalidArguments as exc:
        raise ConfirmationError(
            Code.INVALID_INPUT, f"options.args: {exc.message}; nothing was run."
        ) from exc
    return args


def result_text(content: Any) -> Any:
    """A tool result's content without the note an edited call's result starts with."""
    if not isinstance(content, str) or not content.startswith(EDIT_NOTICE):
        return content
    _, mark, rest = content.partition(_RESPONSE_MARK)
    return rest if mark else ""


def pending_of(snapshot: StateSnapshot) -> list[Pending]:
    """The confirmations the thread waits for, oldest first."""
    found = (Pending.from_interrupt(i) for i in snapshot.interrupts)
    return [p for p in found if p is not None]


def has_checkpoint(snapshot: StateSnapshot) -> bool:
    return snapshot.created_at is not None and bool(snapshot.values)


def resolve(
    snapshot: StateSnapshot,
    action: str,
    call_id: str | None = None,
    *,
    args: dict[str, Any] | None = None,
    tool: BaseTool | None = None,
) -> tuple[Pending, Command[Any]]:
    """The pending call a decision answers and the Command that resumes it; raises if none.

    A confirmation names the call it approves (`call_id`, the id on the card the person saw):
    without it, or with the id of any other call, nothing runs. A rejection may omit it.
    A confirmation with `args` runs the same tool (`tool`) with them, once they pass its schema.
    """
    if action not in DECISIONS:
        raise ConfirmationError(Code.INVALID_INPUT, "action must be '', 'confirm' or 'reject'")
    if not has_checkpoint(snapshot):
        raise ConfirmationError(
            Code.CHECKPOINT_EXPIRED, "This confirmation has expired: the conversation was cleared."
        )
    waiting = pending_of(snapshot)
    if not waiting:
        raise ConfirmationError(
            Code.NO_PENDING_CONFIRMATION, "Nothing is waiting for confirmation."
        )
    first = waiting[0]
    if action == "confirm" and not call_id:
        raise ConfirmationError(
            Code.NO_PENDING_CONFIRMATION,
            "A confirmation must name the call it approves (options.call_id); nothing was run.",
        )
    if call_id is not None and call_id != first.call_id:
        raise ConfirmationError(
            Code.NO_PENDING_CONFIRMATION,
            "That confirmation card is out of date: the call it shows is no longer pending; "
            "nothing was run.",
        )
    if action == "confirm" and args is not None:
        edited = checked_edit(first, args, tool)
        decision: dict[str, Any] = {
            "type": "edit",
            "edited_action": {"name": first.tool, "args": edited},
        }
        return first, Command(resume={first.interrupt_id: decision})
    return first, Command(resume={first.interrupt_id: dict(DECISIONS[action])})


def decision_record(
    pending: Pending,
    action: str,
    *,
    reason: str | None = None,
    edited: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The history entry (common/stream.py `Decision`) that audits a person's decision: `args`
    are those that ran; with an edit, `model_args` are the model's and `edited` is true."""
    verb = "Confirmed" if action == "confirm" else "Rejected"
    what = pending.description if edited is None else describe_call(pending.tool, edited)
    metadata: Decision = {
        "type": DECISION,
        "decision": "confirm" if action == "confirm" else "reject",
        "tool": pending.tool,
        "call_id": pending.call_id,
        "args": pending.args if edited is None else edited,
    }
    if edited is not None:
        metadata["edited"] = True
        metadata["model_args"] = pending.args
    if reason:
        metadata["reason"] = reason
    return {
        "role": "user",
        "content": f"{verb}: {what}" if edited is None else f"{verb} with edits: {what}",
        "metadata": metadata,
    }


def unanswered_calls(snapshot: StateSnapshot) -> tuple[AIMessage | None, list[ToolMessage]]:
    """The last AI message with tool calls and the results it has (including pending writes)."""
    messages: list[BaseMessage] = list((snapshot.values or {}).get("messages", []))
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, AIMessage):
            results = [m for m in messages[i + 1 :] if isinstance(m, ToolMessage)]
            return (message if message.tool_calls else None), results
    return None, []


def closing_messages(snapshot: StateSnapshot, *, reason: str) -> list[BaseMessage]:
    """ToolMessages that give every open tool call of the thread a result: the last AI turn's,
    and any an earlier AI message left open (placed after them).

    Results already produced are repeated with their ids (a no-op when stored, restored when
    they were only pending writes of an interrupted step); the rest get an error result saying
    `reason` ("cancelled" or "rejected"), so the next model call sees a valid history.
    """
    earlier = [_closed(call, "cancelled") for call in _earlier_open_calls(snapshot)]
    ai, results = unanswered_calls(snapshot)
    answered = {m.tool_call_id for m in results}
    missing = [c for c in ai.tool_calls if c["id"] not in answered] if ai is not None else []
    if not missing:
        return list(earlier)
    return [*results, *(_closed(call, reason) for call in missing), *earlier]


def _closed(call: Any, reason: str) -> ToolMessage:
    content = {"error": {"code": reason.upper(), "message": _closing_text(reason)}}
    return ToolMessage(
        content=json.dumps(content), tool_call_id=call["id"], name=call["name"], status="error"
    )


def _earlier_open_calls(snapshot: StateSnapshot) -> list[Any]:
    """Tool calls of AI messages before the last one that no result answers anywhere: left by a
    run that went on writing after another run had taken its conversation (a lease lost to a
    takeover, found at its next renewal). Their results go after the newer messages; the
    model's input puts each next to its call (agent/trim.py `paired`)."""
    messages: list[BaseMessage] = list((snapshot.values or {}).get("messages", []))
    last = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return [
        call
        for m in messages[:last]
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["id"] not in answered
    ]


def _closing_text(reason: str) -> str:
    if reason == "rejected":
        return "The person did not confirm this call; it was not executed. Do not retry it."
    # A person's stop or a process that died: either way the call's effect is unknown (a
    # write may have landed before its answer was lost), so the model must not assume either.
    return (
        "The run stopped before this call returned a result; it may or may not have taken "
        "effect. Do not retry it unasked."
    )
