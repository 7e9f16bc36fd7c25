"""The words of a sweep's answer (Markdown, shown in the conversation and sent as is)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Failing:
    """A dashboard a sweep found failing, with its first failing chart's message."""

    id: int
    title: str
    error: str


def _diagnosis(found: dict[str, Any]) -> list[str]:
    draft = found.get("draft") or {}
    conclusion = draft.get("conclusion")
    if found.get("outcome") != "draft" or not conclusion:
        reason = found.get("stop_reason") or (found.get("error") or {}).get("code") or "no draft"
        return [f"  - Diagnosis: none ({reason})"]
    lines = [f"  - Diagnosis ({conclusion.get('confidence')}): {conclusion.get('summary')}"]
    for item in draft.get("analysis") or []:
        calls = ", ".join(item.get("tool_call_ids") or [])
        lines.append(
            f"    - Evidence: {item.get('finding')} [{item.get('evidence_status')}; {calls}]"
        )
    return lines


def sweep_text(
    env: str,
    checked: int,
    failing: Sequence[Failing],
    new: Sequence[Failing],
    diagnoses: Sequence[dict[str, Any]],
    recovered: Sequence[tuple[int, str]],
) -> str:
    head = f"Sweep of {env}: {checked} dashboards checked, {len(failing)} failing"
    if not new and not recovered:
        return head + ". No change since the previous sweep."
    lines = [head + f"; {len(new)} newly failing, {len(recovered)} recovered."]
    if new:
        lines.append("\nNewly failing:")
        for dashboard, found in zip(new, diagnoses, strict=True):
            lines.append(f"- #{dashboard.id} {dashboard.title}: {dashboard.error[:300]}")
            lines += _diagnosis(found)
    if recovered:
        lines.append("\nRecovered:")
        lines += [f"- #{dashboard_id} {title}" for dashboard_id, title in recovered]
    return "\n".join(lines)
