"""The demo model as one `llm_call` step of a YAML workflow: it cannot write prose about data,
so it says, labelled, what the step was given (each `Label (JSON): ...` line of the prompt, a
count and the first few names) and, where the prompt asks for a GO / NO-GO verdict, derives it
from the validation status it was shown. Nothing is invented."""

# ruff: noqa: RUF001  (Russian words in answers are intended)
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from agent.demo.answers import LABEL, label
from agent.demo.request import text_of

_LABELLED = re.compile(
    r"^(?P<label>[^\n:]{1,80}?)\s*\((?:JSON|columns[^)]*)[^)]*\):\s*(?P<json>.+)$"
)
MAX_NAMES = 3


def respond(messages: Sequence[BaseMessage]) -> str:
    prompt = next((text_of(m) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    ru = "Answer in Russian" in prompt
    lines = [_describe(m["label"], m["json"], ru) for m in _labelled(prompt)]
    verdict = _verdict(prompt, ru)
    head = (
        "Офлайн-демо-модель не пишет выводов о данных; вот что получил этот шаг:"
        if ru
        else "The offline demo model does not write conclusions about data; this step was given:"
    )
    body = "\n".join(f"- {line}" for line in lines) or ("- (нет данных)" if ru else "- (no data)")
    return LABEL + (f"{verdict}\n\n" if verdict else "") + f"{head}\n{body}"


def _labelled(prompt: str) -> list[dict[str, str]]:
    found = []
    for line in prompt.splitlines():
        match = _LABELLED.match(line.strip())
        if match:
            found.append({"label": match["label"].strip(), "json": match["json"].strip()})
    return found


def _describe(label: str, raw: str, ru: bool) -> str:
    try:
        value: Any = json.loads(raw)
    except ValueError:
        return f"{label}: {raw[:80]}"
    if isinstance(value, dict) and "status" in value:
        return f"{label}: {'статус' if ru else 'status'} {value['status']}"
    if isinstance(value, dict) and isinstance(value.get("items"), list):
        value = value["items"]
    if isinstance(value, list):
        names = [_name(item) for item in value[:MAX_NAMES]]
        shown = f" ({', '.join(n for n in names if n)})" if any(names) else ""
        return f"{label}: {len(value)} {'шт.' if ru else 'items'}{shown}"
    return f"{label}: {json.dumps(value, ensure_ascii=False)[:80]}"


def _name(item: Any) -> str:
    return "" if isinstance(item, list) else label(item)[:40]  # a row of values has no name


def _verdict(prompt: str, ru: bool) -> str:
    """GO when the prompt asks for one and the validation status it shows is ok."""
    if '"GO" or "NO-GO"' not in prompt:
        return ""
    status = next(
        (
            json.loads(m["json"]).get("status")
            for m in _labelled(prompt)
            if m["json"].startswith("{") and '"status"' in m["json"]
        ),
        None,
    )
    go = status == "ok"
    reason = f"статус валидации: {status}" if ru else f"validation status: {status}"
    return f"{'GO' if go else 'NO-GO'}: {reason}"
