"""The narrow handle a kind of run shows things through (agent/runs/kinds/, the engines they
run): text, cards, notices, errors, a confirmation, a diagnosis, a workflow's step messages and
the model's answer. The `Turn` itself (its finish, its row's id, its first-output triggers, its
snapshots) stays with the entry (agent/run.py), the run skeleton and the viewers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage

from agent.errors import AgentError
from agent.hitl import Pending
from agent.stream import messages
from agent.stream.events import AnswerText, apply
from agent.stream.turn import Turn


class Show:
    """What a run may show in its turn (see module)."""

    def __init__(self, turn: Turn) -> None:
        self._turn = turn

    # -- the answer and its cards --------------------------------------------------------------

    def text(self, run_id: str | None, delta: str) -> None:
        self._turn.text(run_id, delta)

    def open_text(self) -> str:
        """Text streamed by a model call that has not finished (lost if the run stops now)."""
        return self._turn.open_text()

    def answer_text(self, then: Callable[[], None] = lambda: None) -> AnswerText:
        """The callback handler that streams the model node's tokens into the turn."""
        return AnswerText(self._turn, then)

    def apply(self, update: dict[str, Any]) -> list[Pending]:
        """One `updates` event of the agent's stream; the confirmations it raised."""
        return apply(self._turn, update)

    def model_message(self, message: AIMessage) -> None:
        self._turn.model_message(message)

    def tool_start(self, call: ToolCall) -> None:
        self._turn.tool_start(call)

    def tool_result(self, message: ToolMessage) -> None:
        self._turn.tool_result(message)

    def is_open(self, call_id: str) -> bool:
        return self._turn.is_open(call_id)

    def confirm(self, pending: Pending) -> None:
        self._turn.confirm(pending)

    def diagnosis(self, metadata: messages.Diagnosis, content: str = "") -> None:
        self._turn.diagnosis(metadata, content)

    # -- what went wrong -----------------------------------------------------------------------

    def fail(self, exc: AgentError) -> None:
        self._turn.fail(exc)

    def notice(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        self._turn.notice(code, message, details)

    # -- a workflow's step messages ------------------------------------------------------------

    def card(self, metadata: messages.WorkflowStep, content: str = "") -> int:
        return self._turn.card(metadata, content)

    def update(
        self, index: int, metadata: messages.WorkflowStep, content: str | None = None
    ) -> None:
        self._turn.update(index, metadata, content)

    def card_text(self, index: int, delta: str) -> None:
        self._turn.card_text(index, delta)

    def card_metadata(self, index: int) -> dict[str, Any]:
        """A copy of message `index`'s metadata."""
        return dict(self._turn.entries[index].metadata)

    # -- what the turn's row stores ------------------------------------------------------------

    def record(self) -> tuple[str, dict[str, Any]]:
        """(content, metadata) of the history entry persisting this turn."""
        return self._turn.record()
