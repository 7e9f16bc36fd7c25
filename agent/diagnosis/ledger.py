"""The run's evidence and its progress protocol (CONTRACT.md, "Diagnosis").

After a non-empty (OK) observation the next tool call must assess exactly that call as GAINED
or NO_GAIN; without it the business tool does not run and the model gets a repair observation.
NO_GAIN assessments in a row (an EMPTY result counts as one) or repeated protocol violations
put the run into STOP_REQUIRED: no further tool runs, the model's next answer must be the
draft. Pure bookkeeping: no I/O, no clock; the middleware decides when to ask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Assessment = Literal["GAINED", "NO_GAIN"]
EvidenceStatus = Literal["OK", "EMPTY", "ERROR"]
StopCause = Literal["NO_GAIN", "PROTOCOL_VIOLATED"]
MAX_SCOPE_KEYS = 6
MAX_SCOPE_CHARS = 200


class PreviousObservation(BaseModel):
    """The model's assessment of the previous non-empty observation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool_call_id: str = Field(
        min_length=1, max_length=200, description="The id of the previous tool call"
    )
    assessment: Assessment = Field(
        description="GAINED: it moved the diagnosis forward; NO_GAIN: it did not"
    )


@dataclass
class Check:
    """One business tool call that ran (or is running) in this run."""

    tool_call_id: str
    tool: str
    scope: dict[str, Any]
    evidence_status: EvidenceStatus | None = None  # None: still running (or interrupted)
    code: str | None = None
    assessment: Assessment | None = None

    def snapshot(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "tool_call_id": self.tool_call_id,
            "tool": self.tool,
            "scope": self.scope,
            "evidence_status": self.evidence_status,
        }
        if self.code:
            shown["code"] = self.code
        if self.assessment:
            shown["assessment"] = self.assessment
        return shown


@dataclass(frozen=True)
class Verdict:
    """Whether a tool call may run; if not, the stable code its observation carries."""

    code: str | None = None  # None: run it
    expected: str | None = None  # the call id the model must assess

    @property
    def runs(self) -> bool:
        return self.code is None


RUN = Verdict()
STOP = Verdict("STOP_REQUIRED")


@dataclass
class Ledger:
    saturation_threshold: int
    max_violations: int
    checks: dict[str, Check] = field(default_factory=dict)
    pending: str | None = None  # the OK call awaiting its assessment
    no_gain_streak: int = 0
    violations: int = 0
    stop: StopCause | None = None

    def admit(self, previous: PreviousObservation | None, *, malformed: bool = False) -> Verdict:
        """Check a new call's `previous_observation` and consume it; `malformed` when the
        model sent one that does not parse."""
        if self.stop is not None:
            return STOP
        if self.pending is not None:
            if malformed or previous is None or previous.tool_call_id != self.pending:
                return self.violation(expected=self.pending)
            self._assess(self.pending, previous.assessment)
        elif malformed:
            return self.violation()
        if self.no_gain_streak >= self.saturation_threshold:
            self.stop = "NO_GAIN"
            return STOP
        return RUN

    def violation(self, code: str = "INVALID_PROGRESS_PROTOCOL", **extra: Any) -> Verdict:
        """A protocol violation: a repair observation, or STOP_REQUIRED when they repeat."""
        self.violations += 1
        if self.violations >= self.max_violations:
            self.stop = "PROTOCOL_VIOLATED"
            return STOP
        return Verdict(code, extra.get("expected"))

    def _assess(self, call_id: str, assessment: Assessment) -> None:
        self.checks[call_id].assessment = assessment
        self.pending = None
        self.no_gain_streak = self.no_gain_streak + 1 if assessment == "NO_GAIN" else 0

    def started(self, call_id: str, tool: str, scope: dict[str, Any]) -> None:
        self.checks[call_id] = Check(call_id, tool, bounded(scope))

    def finished(self, call_id: str, status: EvidenceStatus, code: str | None = None) -> None:
        check = self.checks[call_id]
        check.evidence_status, check.code = status, code
        if status == "OK":
            self.pending = call_id
        elif status == "EMPTY":
            self.no_gain_streak += 1  # nothing came back: no gain, nothing to assess

    def citable(self) -> set[str]:
        """The calls a draft may cite: every business call of this run that ran."""
        return set(self.checks)

    def snapshot(self) -> list[dict[str, Any]]:
        return [check.snapshot() for check in self.checks.values()]


def bounded(scope: dict[str, Any]) -> dict[str, Any]:
    """A call's input as the progress snapshot shows it: a few keys, short values."""
    shown: dict[str, Any] = {}
    for key, value in list(scope.items())[:MAX_SCOPE_KEYS]:
        if value is None:
            continue
        if isinstance(value, str) and len(value) > MAX_SCOPE_CHARS:
            value = value[: MAX_SCOPE_CHARS - 1] + "…"
        elif not isinstance(value, str | int | float | bool):
            value = str(value)[:MAX_SCOPE_CHARS]
        shown[key] = value
    return shown
