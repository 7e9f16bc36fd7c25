"""What an observation may say: a whitelisted, bounded projection of each tool's result, and
for failures a stable code with a fixed sentence (never the backend's text, an exception, a
credential, a counter, a threshold or the remaining budget)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.backend_client import BackendError
from agent.diagnosis.ledger import EvidenceStatus
from agent.errors import Code
from agent.tools.names import EXECUTE_SQL, LOOKUP_KNOWLEDGE, QUERY_LOGS

MAX_LOG_ITEMS = 20
MAX_ARTICLES = 5
MAX_ROWS = 20
MAX_COLUMNS = 20
MAX_TEXT = 300
MAX_DETAIL_KEYS = 8

# Stable codes an observation may carry, each with the one sentence the model is told.
MESSAGES: dict[str, str] = {
    "INVALID_PROGRESS_PROTOCOL": (
        "Not run. The previous result is waiting for your assessment: call again with "
        'previous_observation = {"tool_call_id": "<expected_tool_call_id>", '
        '"assessment": "GAINED" or "NO_GAIN"}.'
    ),
    "STOP_REQUIRED": (
        "Not run. Stop collecting evidence: answer now with the final DiagnosisDraft JSON "
        "and call no tool."
    ),
    "ONE_CALL_PER_ROUND": "Not run. Call one tool at a time.",
    Code.UNKNOWN_TOOL: f"Not run. Only {LOOKUP_KNOWLEDGE}, {QUERY_LOGS} and {EXECUTE_SQL} exist.",
    Code.INVALID_ARGUMENTS: "Not run. The input does not match the tool's schema.",
    Code.FORBIDDEN: "The user's role may not read this.",
    Code.NOT_FOUND: "It does not exist.",
    Code.SQL_REJECTED: "Refused: only one read-only SELECT statement is allowed.",
    Code.SQL_ERROR: "The database could not run this query.",
    Code.SQL_TIMEOUT: "The query took too long and was cancelled.",
    Code.INVALID_INPUT: "The platform refused this input.",
    Code.BACKEND_UNAVAILABLE: "The platform did not answer.",
    Code.BACKEND_TIMEOUT: "The platform did not answer in time.",
    Code.TOOL_FAILED: "The tool failed.",
}


def error_code(exc: BackendError) -> str:
    """The stable code of a backend failure."""
    if exc.status == 403:
        return Code.FORBIDDEN
    if exc.status == 404:
        return Code.NOT_FOUND
    if exc.code in MESSAGES:
        return exc.code
    if exc.status >= 500:
        return Code.BACKEND_UNAVAILABLE
    return Code.INVALID_INPUT if exc.status == 422 else Code.TOOL_FAILED


def failure(call_id: str, code: str, **extra: str) -> dict[str, Any]:
    """An ERROR observation: the call, the code, its fixed sentence and named extras."""
    return {
        "tool_call_id": call_id,
        "evidence_status": "ERROR",
        "code": code,
        "message": MESSAGES[code],
        **extra,
    }


def _text(value: Any, limit: int = MAX_TEXT) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


def _scalars(details: Any) -> dict[str, Any]:
    """The scalar values of a log entry's details, a few and short."""
    if not isinstance(details, dict):
        return {}
    kept = {
        str(k): _text(v, 200)
        for k, v in details.items()
        if isinstance(v, str | int | float | bool) and k != "demo"
    }
    return dict(list(kept.items())[:MAX_DETAIL_KEYS])


def _logs(body: dict[str, Any]) -> tuple[EvidenceStatus, dict[str, Any]]:
    items = [
        {
            "at": item.get("created_at"),
            "level": item.get("level"),
            "source": item.get("source"),
            "message": _text(item.get("message")),
            "dashboard_id": item.get("dashboard_id"),
            "details": _scalars(item.get("details")),
        }
        for item in (body.get("items") or [])[:MAX_LOG_ITEMS]
        if isinstance(item, dict)
    ]
    matched = body.get("total") if isinstance(body.get("total"), int) else len(items)
    return ("OK" if items else "EMPTY"), {"entries": items, "matched": matched}


def _knowledge(body: dict[str, Any]) -> tuple[EvidenceStatus, dict[str, Any]]:
    articles = [
        {
            "id": item.get("id"),
            "slug": item.get("slug"),
            "title": _text(item.get("title")),
            "lang": item.get("lang"),
            "snippet": _text(item.get("snippet"), 600),
        }
        for item in (body.get("items") or [])[:MAX_ARTICLES]
        if isinstance(item, dict)
    ]
    return ("OK" if articles else "EMPTY"), {"articles": articles}


def _sql(body: dict[str, Any]) -> tuple[EvidenceStatus, dict[str, Any]]:
    columns = [str(c) for c in (body.get("columns") or [])][:MAX_COLUMNS]
    rows = [
        [_text(cell, 200) for cell in row[:MAX_COLUMNS]]
        for row in (body.get("rows") or [])[:MAX_ROWS]
        if isinstance(row, list)
    ]
    shown = {"columns": columns, "rows": rows, "truncated": bool(body.get("truncated"))}
    shown["truncated"] = shown["truncated"] or len(body.get("rows") or []) > MAX_ROWS
    return ("OK" if rows else "EMPTY"), shown


PROJECTIONS: dict[str, Callable[[dict[str, Any]], tuple[EvidenceStatus, dict[str, Any]]]] = {
    QUERY_LOGS: _logs,
    LOOKUP_KNOWLEDGE: _knowledge,
    EXECUTE_SQL: _sql,
}


def project(tool: str, call_id: str, body: Any) -> tuple[EvidenceStatus, dict[str, Any]]:
    """The observation of a successful call: its status and its whitelisted fields."""
    status, fields = PROJECTIONS[tool](body if isinstance(body, dict) else {})
    return status, {"tool_call_id": call_id, "evidence_status": status, **fields}
