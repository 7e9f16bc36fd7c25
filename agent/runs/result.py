"""What a kind of run returns (agent/runs/kinds/): the skeleton (agent/runs/skeleton.py) is the
one writer of what it holds. A kind never writes the thread or the turn's row itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from agent import resources


@dataclass(frozen=True)
class ThreadWrite:
    """Messages to add to the conversation's agent thread as if node `as_node` wrote them."""

    messages: tuple[BaseMessage, ...]
    as_node: str


@dataclass(frozen=True)
class RunResult:
    """A run's result: what to add to the thread (written once, in order, and never once the
    lease is lost), the turn's assistant history row (content, metadata), and what to do once
    that row exists (`then(message_id)`: the row is then stored at the run's end before the
    lease's release, so that its id is known)."""

    thread: tuple[ThreadWrite, ...] = ()
    row: tuple[str, dict[str, Any]] | None = None
    then: Callable[[int | None], Awaitable[None]] | None = None


@dataclass(frozen=True)
class Question:
    """A new message as the thread will hold it, returned by agent/runs/question.py: the
    messages closing the thread's open calls, then the question (with its attachments), and
    the selected resources read for it."""

    closing: tuple[BaseMessage, ...]
    human: HumanMessage
    resources: resources.PreparedResources

    def graph_input(self) -> dict[str, Any]:
        return {"messages": [*self.closing, self.human]}
