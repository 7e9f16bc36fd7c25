"""Shared pieces of the backend tests: test users, audit-row lookups, envelope checks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import psycopg
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row

from tests.conftest import bearer


@dataclass(frozen=True)
class Person:
    """A user created for one test, with its user JWT and the agent's dual-identity headers."""

    id: str
    username: str
    password: str
    token: str
    service_token: str

    @property
    def headers(self) -> dict[str, str]:
        return bearer(self.token)

    @property
    def agent(self) -> dict[str, str]:
        return {**bearer(self.service_token), "X-On-Behalf-Of": self.token}


NewUser = Callable[..., Person]


def audit_rows(sql: psycopg.Connection, **where: Any) -> list[dict[str, Any]]:
    """Audit rows matching column=value filters, oldest first."""
    clauses = " AND ".join(f"{column} = %s" for column in where) or "TRUE"
    with sql.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT * FROM assistant_audit WHERE {clauses} ORDER BY id", list(where.values())
        )
        return list(cur.fetchall())


def scalar(sql: psycopg.Connection, query: str, *params: Any) -> Any:
    row = sql.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The response is the error envelope with this status and code; returns the error body."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "details"}, error
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["details"], dict)
    return dict(error)


def create_conversation(
    api: httpx.Client, headers: dict[str, str], title: str | None = None
) -> dict[str, Any]:
    body = {} if title is None else {"title": title}
    response = api.post("/api/assistant/conversations", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return dict(response.json())


def append(
    api: httpx.Client,
    agent_headers: dict[str, str],
    conversation_id: str,
    content: str,
    role: str = "user",
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    response = api.post(
        f"/api/assistant/conversations/{conversation_id}/messages",
        json={"role": role, "content": content, "metadata": metadata or {}},
        headers=agent_headers,
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def put_checkpoint(saver: PostgresSaver, thread_id: str) -> None:
    """One real LangGraph checkpoint, with blobs and pending writes, for `thread_id`."""
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": ["a", "list", "goes", "to", "the", "blobs"]}
    checkpoint["channel_versions"] = {"messages": 1}
    saved = saver.put(config, checkpoint, {"step": 1}, {"messages": 1})  # type: ignore[arg-type]
    saver.put_writes(saved, [("messages", ["pending"])], task_id="task-1")


def checkpoint_rows(sql: psycopg.Connection, thread_id: str) -> dict[str, int]:
    tables = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
    return {
        t: scalar(sql, f"SELECT count(*) FROM {t} WHERE thread_id = %s", thread_id) for t in tables
    }
