"""One diagnosis run: exactly one `create_agent` over the three evidence tools, with the budget
and protocol middleware, no checkpointer and no retry; and its outcome, the `diagnosis`
stream message (CONTRACT.md): `draft`, `stopped` with a reason, or `failed` with a code."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph.state import CompiledStateGraph

from agent.config import DiagnosisSettings
from agent.context import Context
from agent.diagnosis.budget import Budget, StopReason
from agent.diagnosis.draft import DiagnosisDraft, DraftError, parse_draft
from agent.diagnosis.ledger import Ledger
from agent.diagnosis.middleware import ProgressProtocol, RoundBudget
from agent.diagnosis.prompt import system_prompt
from agent.errors import Code
from agent.stream import messages
from common.codes import DIAGNOSIS_FAILURES

log = logging.getLogger(__name__)
STEPS_PER_ROUND = 4  # graph steps one model round and its tool call can take

FAILURES: dict[str, str] = {
    Code.INVALID_DRAFT: "The model's answer was not a valid diagnosis draft; nothing was kept.",
    Code.LLM_ERROR: "The language model failed during the diagnosis.",
}
assert tuple(FAILURES) == DIAGNOSIS_FAILURES, "the browser's list is generated from errors.py"


@dataclass(frozen=True)
class DiagnosisOutcome:
    """How a run ended; `metadata()` is the `diagnosis` stream message."""

    run_id: str
    outcome: Literal["draft", "stopped", "failed"]
    progress: dict[str, Any]
    draft: DiagnosisDraft | None = None
    stop_reason: StopReason | None = None
    error_code: str | None = None

    def metadata(self) -> messages.Diagnosis:
        error: messages.ErrorBody | None = None
        if self.error_code is not None:
            error = {"code": self.error_code, "message": FAILURES[self.error_code]}
        return messages.diagnosis(
            run_id=self.run_id,
            outcome=self.outcome,
            progress=self.progress,
            draft=None if self.draft is None else self.draft.model_dump(mode="json"),
            stop_reason=self.stop_reason,
            error=error,
        )


class DiagnosisRun:
    """The agent of one diagnosis and the state its middleware keeps (budget, ledger)."""

    def __init__(
        self,
        settings: DiagnosisSettings,
        *,
        model: BaseChatModel,
        tools: Sequence[BaseTool],
    ) -> None:
        self.run_id = str(uuid.uuid4())
        self.settings = settings
        self.budget = Budget(
            max_model_calls=settings.max_model_calls,
            max_tokens=settings.max_tokens,
        )
        self.ledger = Ledger(
            saturation_threshold=settings.saturation_threshold,
            max_violations=settings.max_protocol_violations,
        )
        self.agent: CompiledStateGraph[Any, Context, Any, Any] = create_agent(
            model,
            list(tools),
            system_prompt=system_prompt(),
            middleware=[RoundBudget(self.budget, self.ledger), ProgressProtocol(self.ledger)],
            context_schema=Context,
            name="diagnosis",
        )

    @property
    def recursion_limit(self) -> int:
        return (self.settings.max_model_calls + 1) * STEPS_PER_ROUND

    def progress(self) -> dict[str, Any]:
        """What the run checked so far, and what it spent (for the person, not the model)."""
        return {
            "checked": self.ledger.snapshot(),
            "model_calls": self.budget.model_calls,
            "tokens": self.budget.tokens,
            "stop_required": self.ledger.stop,
        }

    def concluded(self, final_text: str) -> DiagnosisOutcome:
        """The outcome of a run that ended with the model's final text."""
        try:
            draft = parse_draft(
                final_text,
                citable=self.ledger.citable(),
                max_bytes=self.settings.max_draft_bytes,
            )
        except DraftError as exc:
            log.info("diagnosis %s: invalid draft (%s)", self.run_id, exc.reason)
            return self.failed(Code.INVALID_DRAFT)
        return DiagnosisOutcome(self.run_id, "draft", self.progress(), draft=draft)

    def stopped(self, reason: StopReason) -> DiagnosisOutcome:
        return DiagnosisOutcome(self.run_id, "stopped", self.progress(), stop_reason=reason)

    def failed(self, code: str) -> DiagnosisOutcome:
        return DiagnosisOutcome(self.run_id, "failed", self.progress(), error_code=code)
