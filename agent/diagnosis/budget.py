"""One run's budget: model rounds and tokens (from the usage the model reports), checked
before every model round. Running out is a controlled stop, not an error: `RunStopped` carries
the reason up to the session, which reports it as `stopped`. The deadline and a lost lease are
the run skeleton's (agent/runs/skeleton.py): they end the run mid-round."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage

from agent.errors import Code

StopReason = Literal[Code.SATURATED, Code.BUDGET_EXHAUSTED, Code.DEADLINE, Code.CANCELLED]


class RunStopped(Exception):
    """The run stops here on purpose; `reason` is the diagnosis message's `stop_reason`."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason: StopReason = reason


@dataclass
class Budget:
    max_model_calls: int
    max_tokens: int
    model_calls: int = 0
    tokens: int = 0

    def before_round(self) -> None:
        """Spend one model round, or raise RunStopped if the run may not take another."""
        if self.model_calls >= self.max_model_calls or self.tokens >= self.max_tokens:
            raise RunStopped(Code.BUDGET_EXHAUSTED)
        self.model_calls += 1

    def record(self, messages: Sequence[BaseMessage]) -> None:
        """Add the tokens a model round reports using (nothing when it reports none)."""
        for message in messages:
            if isinstance(message, AIMessage) and message.usage_metadata:
                self.tokens += int(message.usage_metadata.get("total_tokens") or 0)
