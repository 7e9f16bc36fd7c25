"""The DiagnosisDraft (CONTRACT.md, "Diagnosis") and its strict parser.

The model's final text must be exactly one JSON object of this shape: no Markdown fence, no
prose around it, nothing repaired or extracted. Every cited call id must be a call of this run
whose business tool ran, a SUPPORTED finding cites at least one, and a conclusion needs at
least one SUPPORTED finding: no evidence, no cause.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)]
Item = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
CallId = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Conclusion(_Strict):
    summary: Text = Field(description="The cause the evidence supports, in one or two sentences")
    confidence: Literal["low", "medium", "high"]


class Finding(_Strict):
    finding: Text = Field(description="One observation, as the cited tool results show it")
    evidence_status: Literal["SUPPORTED", "NEGATIVE_OBSERVATION"] = Field(
        description="SUPPORTED: the cited results show it; NEGATIVE_OBSERVATION: a scoped "
        "check found nothing"
    )
    tool_call_ids: list[CallId] = Field(
        max_length=10, description="The ids of this run's tool calls whose results show it"
    )


class Limitations(_Strict):
    checked_scope: list[Item] = Field(max_length=20, description="What this run actually checked")
    missing_info: list[Item] = Field(
        max_length=20, description="What is still unknown and would be needed"
    )


class DiagnosisDraft(_Strict):
    """The diagnosis the model returns as its final text."""

    conclusion: Conclusion | None = Field(
        description="null unless the findings support a cause; never a guess"
    )
    analysis: list[Finding] = Field(max_length=12)
    action_plan: list[Item] = Field(max_length=10)
    recommendations: list[Item] = Field(max_length=10)
    limitations: Limitations


class DraftError(Exception):
    """The final text is not a valid DiagnosisDraft; `reason` is for logs, never for the model."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def draft_schema() -> dict[str, Any]:
    """The JSON schema the model is given."""
    return DiagnosisDraft.model_json_schema()


def parse_draft(text: str, *, citable: Collection[str], max_bytes: int) -> DiagnosisDraft:
    """`text` as a DiagnosisDraft, or DraftError: exactly one JSON object within `max_bytes`
    (UTF-8), citing only `citable` call ids."""
    size = len(text.encode("utf-8"))
    if size == 0 or not text.strip():
        raise DraftError("empty")
    if size > max_bytes:
        raise DraftError(f"{size} bytes, over {max_bytes}")
    if not text.lstrip().startswith("{"):
        raise DraftError("not a bare JSON object")
    try:
        draft = DiagnosisDraft.model_validate_json(text)
    except ValidationError as exc:
        raise DraftError(f"schema: {exc.errors(include_input=False)[:3]}") from exc
    _check_citations(draft, set(citable))
    return draft


def _check_citations(draft: DiagnosisDraft, citable: set[str]) -> None:
    for finding in draft.analysis:
        foreign = [i for i in finding.tool_call_ids if i not in citable]
        if foreign:
            raise DraftError(f"cites calls not of this run: {foreign[:3]}")
        if finding.evidence_status == "SUPPORTED" and not finding.tool_call_ids:
            raise DraftError("a SUPPORTED finding cites no call")
    supported = any(f.evidence_status == "SUPPORTED" for f in draft.analysis)
    if draft.conclusion is not None and not supported:
        raise DraftError("a conclusion without a SUPPORTED finding")
