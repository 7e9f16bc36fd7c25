"""The model calls of one run, as the LangChain callbacks see them, and the budget check.

`Meter` holds the run's calls. `Guard` (a handler with `raise_error`) opens each call, after
refusing it once the user's tokens today (the lease answer's, plus this run's calls) have
reached the daily budget; `Counter` (a handler that never raises) ends them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import openai
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import LLMResult

from agent.callbacks import ModelEvents
from agent.errors import UsageLimit
from agent.usage.estimate import chars_of, tokens_of_chars


@dataclass
class Call:
    """One model call; `reported` once the model's usage arrives, else estimated."""

    key: str
    model: str
    input_chars: int
    output_chars: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reported: bool = False
    ended: bool = False

    def estimate(self) -> None:
        self.input_tokens = tokens_of_chars(self.input_chars)
        self.output_tokens = tokens_of_chars(self.output_chars)

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class Standing:
    """The user's tokens today and budget at the start of the run (the lease answer)."""

    tokens_today: int = 0
    daily_tokens: int | None = None
    resets_at: datetime | None = None

    @classmethod
    def from_grant(cls, grant: Any) -> Standing:
        usage = grant.get("usage") if isinstance(grant, dict) else None
        if not isinstance(usage, dict):
            return cls()
        resets = usage.get("resets_at")
        return cls(
            tokens_today=int(usage.get("tokens_today") or 0),
            daily_tokens=usage.get("daily_tokens"),
            resets_at=datetime.fromisoformat(resets) if isinstance(resets, str) else None,
        )


@dataclass
class Meter:
    """This run's calls and the user's standing."""

    run_id: str
    standing: Standing = field(default_factory=Standing)
    calls: dict[uuid.UUID, Call] = field(default_factory=dict)

    def spent(self) -> int:
        """The user's tokens today, with the calls of this run that have ended."""
        return self.standing.tokens_today + sum(c.total for c in self.calls.values() if c.ended)

    def check(self) -> None:
        """UsageLimit when the daily budget is reached."""
        budget = self.standing.daily_tokens
        if budget is not None and self.spent() >= budget:
            raise limit_reached(budget, self.standing.resets_at)

    def open(self, run_id: uuid.UUID, model: str, input_chars: int) -> None:
        self.calls[run_id] = Call(f"{self.run_id}:{run_id.hex}", model, input_chars)

    def close_all(self) -> list[Call]:
        """Every call, an unfinished one (a stopped stream) ended with an estimate."""
        for call in self.calls.values():
            if not call.ended:
                call.estimate()
                call.ended = True
        return list(self.calls.values())


def limit_reached(budget: int, resets_at: datetime | None) -> UsageLimit:
    """The stream error of a user at their budget; the browser shows it in their language from
    the code and `details.resets_at`."""
    when = resets_at or datetime.now(UTC)
    message = (
        f"You have used your daily budget of {budget:,} tokens. "
        f"It resets at {when.astimezone(UTC):%H:%M} UTC ({when.astimezone(UTC):%Y-%m-%d})."
    )
    return UsageLimit(message, details={"daily_tokens": budget, "resets_at": when.isoformat()})


def _model_name(serialized: dict[str, Any], params: dict[str, Any]) -> str:
    name = params.get("model") or params.get("model_name") or serialized.get("name") or "unknown"
    return str(name)[:200]


def _reported(response: LLMResult) -> tuple[int, int] | None:
    """(input, output) tokens the model reported for this call, if it did."""
    for generations in response.generations:
        for generation in generations:
            message = getattr(generation, "message", None)
            if isinstance(message, AIMessage) and message.usage_metadata:
                reported = message.usage_metadata
                return int(reported["input_tokens"]), int(reported["output_tokens"])
    usage: Any = (response.llm_output or {}).get("token_usage")
    if isinstance(usage, dict) and usage:
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return None


def _output_chars(response: LLMResult) -> int:
    total = 0
    for generations in response.generations:
        for generation in generations:
            message = getattr(generation, "message", None)
            total += (
                chars_of([message]) if isinstance(message, BaseMessage) else len(generation.text)
            )
    return total


class Counter(ModelEvents):
    """Counts every chat-model call of the run; never raises into the run."""

    def __init__(self, meter: Meter) -> None:
        super().__init__()
        self.meter = meter

    async def on_llm_new_token(
        self, token: str | list[str | dict[str, Any]], *, run_id: uuid.UUID, **kwargs: Any
    ) -> None:
        if (call := self.meter.calls.get(run_id)) is not None:
            call.output_chars += len(token) if isinstance(token, str) else len(str(token))

    async def on_llm_end(self, response: LLMResult, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        call = self.meter.calls.get(run_id)
        if call is None or call.ended:
            return
        reported = _reported(response)
        if reported is None:
            call.output_chars = max(call.output_chars, _output_chars(response))
            call.estimate()
        else:
            call.input_tokens, call.output_tokens = reported
            call.reported = True
        call.ended = True

    async def on_llm_error(self, error: BaseException, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        if isinstance(error, openai.APIStatusError):  # refused by the provider: nothing to bill
            self.meter.calls.pop(run_id, None)
            return
        if (call := self.meter.calls.get(run_id)) is not None and not call.ended:
            call.estimate()  # what was sent, and what streamed before the failure
            call.ended = True


class Guard(ModelEvents):
    """Refuses the next model call once the budget is reached (the run stops with USAGE_LIMIT)."""

    raise_error = True

    def __init__(self, meter: Meter) -> None:
        super().__init__()
        self.meter = meter

    async def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: uuid.UUID,
        **kwargs: Any,
    ) -> None:
        self.meter.check()  # before the call is counted: a refused call is no call
        params = dict(kwargs.get("invocation_params") or {})
        chars = sum(chars_of(batch) for batch in messages)
        self.meter.open(run_id, _model_name(serialized or {}, params), chars)
