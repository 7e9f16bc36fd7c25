"""A diagnosis outcome in a few plain lines: the content of its history row and what the
conversation's agent thread is told, so a following chat turn can refer to it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_CHARS = 3000
MAX_ITEMS = 6


def _lines(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    return [f"{title}:", *(f"- {item}" for item in items[:MAX_ITEMS])]


def summarise(diagnosis: Mapping[str, Any]) -> str:
    """The `diagnosis` stream message's metadata as text (bounded)."""
    outcome = diagnosis.get("outcome")
    if outcome == "draft":
        lines = _draft(diagnosis.get("draft") or {})
    elif outcome == "stopped":
        checked = [
            f"{c.get('tool')} {c.get('scope')}: {c.get('evidence_status') or 'not finished'}"
            for c in (diagnosis.get("progress") or {}).get("checked", [])
        ]
        lines = [f"Diagnosis stopped ({diagnosis.get('stop_reason')}) without a draft."]
        lines += _lines("Checked", checked)
    else:
        code = (diagnosis.get("error") or {}).get("code", "FAILED")
        lines = [f"Diagnosis failed ({code}); no draft was accepted."]
    return "\n".join(lines)[:MAX_CHARS]


def _draft(draft: dict[str, Any]) -> list[str]:
    conclusion = draft.get("conclusion")
    if conclusion:
        head = f"Diagnosis: {conclusion['summary']} (confidence: {conclusion['confidence']})."
    else:
        head = "Diagnosis: no conclusion; the evidence gathered does not support a cause."
    limitations = draft.get("limitations") or {}
    return [
        head,
        *_lines("Findings", [f["finding"] for f in draft.get("analysis", [])]),
        *_lines("Action plan", draft.get("action_plan", [])),
        *_lines("Recommendations", draft.get("recommendations", [])),
        *_lines("Checked", limitations.get("checked_scope", [])),
        *_lines("Missing", limitations.get("missing_info", [])),
    ]
