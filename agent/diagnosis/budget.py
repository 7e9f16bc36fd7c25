"""One run's budget: model rounds, tokens (from the usage the model reports), a deadline and
cancellation, checked before every model round. Running out is a controlled stop, not an
error: `RunStopped` carries the reason up to the session, which reports it as `stopped`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage

from agent.errors import Code

StopReason = Literal[Code.SATURATED, Code.BUDGET_EXHAUSTED, Code.DEADLINE, Code.CANCELLED]


class RunStopped(Exception):
    """The run stops here on purpose; `reason` is the diagnosis message's `stop_reason`."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason: StopReason = reason


def _never() -> bool:
    return False


@dataclass
class Budget:
    max_model_calls: int
    max_tokens: int
    deadline_s: float
    cancelled: Callable[[], bool] = _never
    started: float = field(default_factory=time.monotonic)
    model_calls: int = 0
    tokens: int = 0

    @property
    def deadline(self) -> float:
        return self.started + self.deadline_s

    def left_s(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def before_round(self) -> None:
        """Spend one model round, or raise RunStopped if the run may not take another."""
        if self.cancelled():
            raise RunStopped(Code.CANCELLED)
        if time.monotonic() >= self.deadline:
            raise RunStopped(Code.DEADLINE)
        if self.model_calls >= self.max_model_calls or self.tokens >= self.max_tokens:
            raise RunStopped(Code.BUDGET_EXHAUSTED)
        self.model_calls += 1

    def record(self, messages: Sequence[BaseMessage]) -> None:
        """Add the tokens a model round reports using (nothing when it reports none)."""
        for message in messages:
            if isinstance(message, AIMessage) and message.usage_metadata:
                self.tokens += int(message.usage_metadata.get("total_tokens") or 0)
