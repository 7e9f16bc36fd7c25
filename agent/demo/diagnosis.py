"""The demo model in diagnosis mode (agent.diagnosis): for a dashboard it searches the logs
for failed validations, then the knowledge base for the error, following the progress
protocol, and answers with a DiagnosisDraft citing both calls; when the logs show nothing it
answers with no conclusion and says what it checked."""

# ruff: noqa: RUF001  (Russian words in answers are intended)
from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agent.demo.request import dashboard_ids, is_russian, text_of
from agent.diagnosis.draft import DiagnosisDraft
from agent.diagnosis.prompt import MARKER

LOOK_BACK = timedelta(days=7)
FAILED = '"failed validation"'


def is_diagnosis(messages: Sequence[BaseMessage]) -> bool:
    """Whether the model was called by a diagnosis run (its system prompt says so)."""
    return any(isinstance(m, SystemMessage) and MARKER in text_of(m) for m in messages[:1])


@dataclass(frozen=True)
class Result:
    call_id: str
    tool: str
    body: dict[str, Any]

    @property
    def status(self) -> str:
        return str(self.body.get("evidence_status", "ERROR"))


def respond(messages: Sequence[BaseMessage]) -> AIMessage:
    """The next step of the diagnosis: a tool call, or the final draft as JSON text."""
    question = _question(messages)
    query = str(question.get("query") or "")
    ru = is_russian(query)
    results = _results(messages)
    dashboard = _dashboard(query, question.get("focus"))
    if dashboard is None:
        return _final(_no_target(ru))
    if not results:
        since = (datetime.now(UTC) - LOOK_BACK).replace(microsecond=0).isoformat()
        args = {"query": FAILED, "level": "error", "dashboard_id": dashboard, "since": since}
        return _call("query_logs", {"input": args})
    logs = results[0]
    if len(results) == 1 and logs.status == "OK":
        previous = {"tool_call_id": logs.call_id, "assessment": "GAINED"}
        return _call(
            "lookup_knowledge",
            {"previous_observation": previous, "input": {"query": _error_of(logs)}},
        )
    if logs.status != "OK":
        return _final(_nothing_logged(dashboard, logs, ru))
    return _final(_diagnosed(dashboard, logs, results[1], ru))


def _question(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    human = next((m for m in messages if isinstance(m, HumanMessage)), None)
    try:
        value = json.loads(text_of(human)) if human is not None else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _results(messages: Sequence[BaseMessage]) -> list[Result]:
    found = []
    for message in messages:
        if isinstance(message, ToolMessage):
            try:
                body = json.loads(text_of(message))
            except ValueError:
                body = {}
            found.append(
                Result(
                    message.tool_call_id, message.name or "", body if isinstance(body, dict) else {}
                )
            )
    return found


def _dashboard(query: str, focus: Any) -> int | None:
    found = dashboard_ids(query)
    if found:
        return found[-1]
    if isinstance(focus, dict) and focus.get("kind", "dashboard") == "dashboard":
        return focus.get("id") if isinstance(focus.get("id"), int) else None
    return None


def _error_of(logs: Result) -> str:
    entry = (logs.body.get("entries") or [{}])[0]
    details = entry.get("details") or {}
    return str(details.get("error") or entry.get("message") or "failed validation")[:200]


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    call = {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:24]}", "type": "tool_call"}
    return AIMessage(content="", tool_calls=[call])


def _final(draft: dict[str, Any]) -> AIMessage:
    return AIMessage(content=DiagnosisDraft.model_validate(draft).model_dump_json())


def _t(ru: bool, en: str, russian: str) -> str:
    return russian if ru else en


def _no_target(ru: bool) -> dict[str, Any]:
    return {
        "conclusion": None,
        "analysis": [],
        "action_plan": [],
        "recommendations": [
            _t(
                ru,
                "Open the dashboard, or name it by id, and ask again.",
                "Откройте дашборд или укажите его номер и спросите снова.",
            )
        ],
        "limitations": {
            "checked_scope": [],
            "missing_info": [
                _t(ru, "Which dashboard to check (its id).", "Какой дашборд проверить (его номер).")
            ],
        },
    }


def _scope(dashboard: int, ru: bool) -> str:
    return _t(
        ru,
        f"Error logs of dashboard {dashboard} mentioning failed validation, last 7 days",
        f"Журнал ошибок дашборда {dashboard} с проваленной проверкой за 7 дней",
    )


def _nothing_logged(dashboard: int, logs: Result, ru: bool) -> dict[str, Any]:
    if logs.status == "EMPTY":
        finding = _t(
            ru,
            f"No failed validation of dashboard {dashboard} was logged in the last 7 days.",
            f"За 7 дней проваленных проверок дашборда {dashboard} в журнале нет.",
        )
        analysis = [
            {
                "finding": finding,
                "evidence_status": "NEGATIVE_OBSERVATION",
                "tool_call_ids": [logs.call_id],
            }
        ]
    else:
        analysis = []
    return {
        "conclusion": None,
        "analysis": analysis,
        "action_plan": [],
        "recommendations": [
            _t(
                ru,
                "Describe the symptom (chart, error text, since when) to look further.",
                "Опишите симптом (график, текст ошибки, с какого времени), чтобы искать дальше.",
            )
        ],
        "limitations": {
            "checked_scope": [_scope(dashboard, ru)],
            "missing_info": [
                _t(
                    ru,
                    "A symptom to look for: no failure is on record.",
                    "Симптом для поиска: сбоев в журнале нет.",
                )
            ],
        },
    }


def _diagnosed(dashboard: int, logs: Result, knowledge: Result, ru: bool) -> dict[str, Any]:
    entry = (logs.body.get("entries") or [{}])[0]
    details = entry.get("details") or {}
    cause = str(entry.get("message") or "")[:600]
    if details.get("hint"):
        cause += f" ({details['hint']})"
    articles = knowledge.body.get("articles") or [] if knowledge.status == "OK" else []
    title = str(articles[0].get("title")) if articles else ""
    analysis = [
        {
            "finding": _t(
                ru, f"Latest validation failure: {cause}", f"Последний сбой проверки: {cause}"
            ),
            "evidence_status": "SUPPORTED",
            "tool_call_ids": [logs.call_id],
        }
    ]
    if title:
        analysis.append(
            {
                "finding": _t(
                    ru,
                    f"The runbook “{title}” describes this failure and its fix.",
                    f"Инструкция «{title}» описывает этот сбой и его исправление.",
                ),
                "evidence_status": "SUPPORTED",
                "tool_call_ids": [knowledge.call_id],
            }
        )
    else:
        analysis.append(
            {
                "finding": _t(
                    ru,
                    "No runbook matched this error.",
                    "Подходящей инструкции для этой ошибки нет.",
                ),
                "evidence_status": "NEGATIVE_OBSERVATION",
                "tool_call_ids": [knowledge.call_id],
            }
        )
    return {
        "conclusion": {"summary": cause, "confidence": "high" if title else "medium"},
        "analysis": analysis,
        "action_plan": [
            _t(
                ru,
                f"Create a branch of dashboard {dashboard}.",
                f"Создайте ветку дашборда {dashboard}.",
            ),
            _t(
                ru,
                "Fix the failing chart's SQL on the branch and commit it.",
                "Исправьте SQL падающего графика в ветке и закоммитьте.",
            ),
            _t(
                ru,
                "Validate the new version, then deploy it.",
                "Проверьте новую версию и задеплойте её.",
            ),
        ],
        "recommendations": [
            _t(ru, f"Follow the runbook “{title}”.", f"Следуйте инструкции «{title}».")
            if title
            else _t(
                ru,
                "Check the chart's SQL against the current schema.",
                "Сверьте SQL графика с текущей схемой.",
            ),
        ],
        "limitations": {
            "checked_scope": [
                _scope(dashboard, ru),
                _t(ru, f"Knowledge base: {_error_of(logs)}", f"База знаний: {_error_of(logs)}"),
            ],
            "missing_info": [
                _t(
                    ru,
                    "The chart's SQL and the table schema were not read in this run.",
                    "SQL графика и схема таблицы в этом запуске не читались.",
                )
            ],
        },
    }
