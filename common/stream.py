"""The stream protocol's message shapes, typed once for both processes (CONTRACT.md, "Stream
protocol"), and the history rows a turn is stored as.

A stream value is the list of the turn's assistant messages `{role, content, metadata}`;
`metadata.type` says what each one is (absent for answer text). The agent's stream package is the
one writer (agent/stream/messages.py constructs each shape); a turn's assistant history row keeps
them as `{"parts": [...]}`, and a person's decision on a confirmation is a user row of type
`decision` (agent/hitl.py). The backend reads stored rows only through the readers below
(feedback, sharing, export), never by spelling a shape's name. The browser's types
(frontend/src/lib/protocol.ts) are pinned to these by tests/agent/unit/test_stream_messages.py.
"""

# No `from __future__ import annotations`: TypedDict reads NotRequired from evaluated annotations.
from collections.abc import Mapping
from typing import Any, Final, Literal, NotRequired, TypedDict, cast

# Each shape's `metadata.type`.
TOOL_START: Final = "tool_start"
TOOL_END: Final = "tool_end"
TOOL_ERROR: Final = "tool_error"
CONFIRM_REQUIRED: Final = "confirm_required"
ERROR: Final = "error"
NOTICE: Final = "notice"
WORKFLOW_STEP: Final = "workflow_step"
DIAGNOSIS: Final = "diagnosis"
DECISION: Final = "decision"  # a user row: a person's decision on a confirmation

CONFIRM_ALLOWED = ("confirm", "reject")
Action = Literal["confirm", "reject"]


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


Metadata = (
    ToolStart | ToolEnd | ToolError | ConfirmRequired | Error | Notice | WorkflowStep | Diagnosis
)
ToolCard = ToolStart | ToolEnd | ToolError | ConfirmRequired
# Each shape by its `type` (the test that pins the browser's types reads it too).
SHAPES: dict[str, type] = {
    TOOL_START: ToolStart,
    TOOL_END: ToolEnd,
    TOOL_ERROR: ToolError,
    CONFIRM_REQUIRED: ConfirmRequired,
    ERROR: Error,
    NOTICE: Notice,
    WORKFLOW_STEP: WorkflowStep,
    DIAGNOSIS: Diagnosis,
}
# The shapes of a tool call's card, and those that also name the call's tool.
TOOL_CALLS = frozenset({TOOL_START, TOOL_END, TOOL_ERROR})
TOOL_CARDS = TOOL_CALLS | {CONFIRM_REQUIRED}


class Decision(TypedDict):
    """A user history row's metadata recording a person's decision on a confirmation: `args`
    are those that ran; with an edit, `model_args` are the model's and `edited` is true."""

    type: Literal["decision"]
    decision: Action
    tool: str
    call_id: str
    args: dict[str, Any]
    model_args: NotRequired[dict[str, Any]]
    edited: NotRequired[bool]
    reason: NotRequired[str]


# A decision's fields as an audit row or a shared page keeps them (all but `type`).
DECISION_FIELDS = tuple(k for k in Decision.__annotations__ if k != "type")


class Attachment(TypedDict):
    """A file attached to a question (its text went to the model; the row keeps this)."""

    name: str
    content_type: str
    size: int
    sha256: NotRequired[str]
    truncated: NotRequired[bool]


class Resource(TypedDict):
    """A selected file or table read into a question (`status`: included or refused)."""

    ref: str
    status: Literal["included", "refused"]
    truncated: NotRequired[bool]
    error: NotRequired[str]


class Resources(TypedDict):
    files: list[Resource]
    tables: list[Resource]


class Question(TypedDict, total=False):
    """A user history row's metadata for a question (every field optional)."""

    attachments: list[Attachment]
    resources: Resources
    truncated: bool
    mode: str


# What a question's shared copy may show of an attachment and of a resource (no contents).
ATTACHMENT_SHOWN = ("name", "content_type", "size")
RESOURCE_SHOWN = ("ref", "status")
RESOURCE_KINDS = ("files", "tables")
QUESTION_FLAGS = ("mode", "truncated")


# Keys a part's metadata may carry besides its shape's: the owner's own records' ids (its debug
# record, its workflow execution).
PART_RECORD_KEYS = ("message_id", "execution_id")


class Part(TypedDict):
    """One stream message as an assistant history row keeps it (`metadata` is empty for
    answer text; it may also carry PART_RECORD_KEYS)."""

    role: Literal["assistant"]
    content: str
    metadata: dict[str, Any]


class AssistantRecord(TypedDict):
    """An assistant history row's metadata: the turn's stream messages, in order."""

    parts: list[Part]


def record(parts: list[Part]) -> AssistantRecord:
    return {"parts": parts}


# Readers of stored rows: tolerant of anything (a row is JSON written long ago), typed results.


def parts_of(metadata: Mapping[str, Any] | None) -> list[Part]:
    """The parts of an assistant row's metadata; anything that is not a part is left out."""
    found = (metadata or {}).get("parts")
    items = found if isinstance(found, list) else []
    return [
        {
            "role": "assistant",
            "content": str(p.get("content") or ""),
            "metadata": dict(p.get("metadata") or {}),
        }
        for p in items
        if isinstance(p, dict)
    ]


def kind_of(metadata: Mapping[str, Any] | None) -> str | None:
    """A part's `metadata.type` (None: answer text)."""
    kind = (metadata or {}).get("type")
    return kind if isinstance(kind, str) else None


def tool_card(metadata: Mapping[str, Any] | None) -> ToolCard | None:
    """The part's metadata as a tool call's card (or its confirmation), if it is one."""
    if kind_of(metadata) in TOOL_CARDS and isinstance((metadata or {}).get("tool"), str):
        return cast(ToolCard, metadata)
    return None


def shape_of(metadata: Mapping[str, Any] | None) -> Metadata | None:
    """The part's metadata as the shape its `type` names; None for answer text or an unknown
    type."""
    return cast(Metadata, metadata) if kind_of(metadata) in SHAPES else None


def question_of(role: str, metadata: Mapping[str, Any] | None) -> Question | None:
    """A user row's metadata as a question's (None: a decision, or not a user row)."""
    if role != "user" or kind_of(metadata) == DECISION:
        return None
    return cast(Question, dict(metadata or {}))


def attachments_of(question: Question) -> list[Attachment]:
    """The question's attachments that are well formed enough to show."""
    found = question.get("attachments")
    return [a for a in found if isinstance(a, dict)] if isinstance(found, list) else []


def resources_of(question: Question) -> dict[str, list[Resource]]:
    """The question's resources by kind (files, tables), each kind present."""
    found = question.get("resources")
    items: Mapping[str, Any] = found if isinstance(found, dict) else {}
    return {
        kind: [cast(Resource, r) for r in items.get(kind) or [] if isinstance(r, dict)]
        for kind in RESOURCE_KINDS
    }


def decision_of(role: str, metadata: Mapping[str, Any] | None) -> Decision | None:
    """A user row's metadata as a person's decision, if it is one."""
    if role == "user" and kind_of(metadata) == DECISION:
        return cast(Decision, metadata)
    return None
