"""Fault: the database restarts while an answer streams, or is away when a step of the turn must
be stored. The turn waits for it and completes, both history rows and their audit rows are
kept (once each: every history write carries an idempotency key), the thread holds no unanswered
tool call, and the next turn works on fresh connections. While the database is away the backend
answers 503 STORE_UNAVAILABLE, and a write sent again with its key is stored exactly once."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import Any

import psycopg
from pydantic import SecretStr

from agent import writes
from agent.backend_client import BackendClient
from agent.config import Settings
from agent.context import Context
from tests.agent.support import (
    assert_every_tool_call_answered,
    assert_valid_for_any_provider,
    collect,
    error_code,
    history,
    kinds,
    text_of,
    thread_messages,
    wait_for,
)
from tests.conftest import AGENT_CLIENT_SECRET
from tests.faults.support import (
    audit_count,
    roles_of,
    wait_until,
)

SQL = {"datasource": "warehouse", "query": "SELECT 1 AS one"}


def test_a_postgres_restart_mid_stream_loses_nothing_and_the_next_turn_works(stack):
    cid, token = stack.conversation(), stack.tokens["admin"]
    stack.llm.enqueue(
        {"tool_calls": [{"name": "execute_sql", "args": SQL}]},
        {"tokens": 30, "delay_ms": 100},
    )
    job = stack.chat.submit(token, cid, "Run a query and tell me about it")
    wait_for(job, lambda m: len(text_of(m)) >= 6)

    stack.postgres.restart()

    outputs = collect(job)
    assert error_code(outputs) is None, outputs[-1]
    assert kinds(outputs[-1]) == ["tool_end", "text"]
    assert text_of(outputs[-1]).startswith("t0 t1") and text_of(outputs[-1]).endswith("t29 ")
    wait_until(lambda: len(history(stack.api, token, cid)) == 2, what="both history rows")
    assert roles_of(history(stack.api, token, cid)) == ["user", "assistant"]
    assert audit_count(stack.database_url, "conversation.message_append", resource_id=cid) == 2
    assert _stored(stack.database_url, cid) == [("user", 1), ("assistant", 1)]
    stack.llm.enqueue({"text": "Still here."})
    assert text_of(stack.chat.send(token, cid, "Are you still there?")[-1]) == "Still here."
    assert_valid_for_any_provider(stack.llm.requests[-1])
    messages = thread_messages(stack.database_url, cid)
    assert_every_tool_call_answered(messages)
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai", "human", "ai"]


def test_a_database_away_when_a_step_is_stored_holds_the_turn_until_it_is_back(stack):
    cid, token = stack.conversation(), stack.tokens["admin"]
    stack.llm.enqueue({"tokens": 6, "delay_ms": 150})
    job = stack.chat.submit(token, cid, "A short answer, please")
    wait_until(lambda: history(stack.api, token, cid), what="the question's history row")

    stack.postgres.halt()
    try:
        wait_for(job, lambda m: text_of(m).endswith("t5 "))  # the model is done ...
        time.sleep(2)
        assert not job.done()  # ... and its step waits to be stored
    finally:
        stack.postgres.start()

    outputs = collect(job)
    assert error_code(outputs) is None and text_of(outputs[-1]) == "t0 t1 t2 t3 t4 t5 "
    wait_until(lambda: len(history(stack.api, token, cid)) == 2, what="both history rows")
    assert roles_of(history(stack.api, token, cid)) == ["user", "assistant"]
    assert _stored(stack.database_url, cid) == [("user", 1), ("assistant", 1)]
    stack.llm.enqueue({"text": "Still here."})
    assert text_of(stack.chat.send(token, cid, "Are you still there?")[-1]) == "Still here."
    messages = thread_messages(stack.database_url, cid)
    assert [m.type for m in messages] == ["human", "ai", "human", "ai"]


def test_a_history_write_in_flight_while_the_database_restarts_is_stored_exactly_once(stack):
    cid, token = stack.conversation(), stack.tokens["admin"]
    path = f"/api/assistant/conversations/{cid}/messages"
    key = uuid.uuid4().hex
    body = {"role": "user", "content": "written across a restart", "metadata": {}}
    service = stack.api.post(
        "/api/auth/service-token",
        json={"client_id": "agent-chat", "client_secret": AGENT_CLIENT_SECRET},
    ).json()["access_token"]
    headers = {
        "Authorization": f"Bearer {service}",
        "X-On-Behalf-Of": token,
        writes.HEADER: key,
    }
    answers: list[Any] = []

    def write() -> None:  # the agent's own write path: its key, retried while the store is away
        async def send() -> Any:
            settings = Settings.model_construct(
                backend_url=stack.backend.url,
                agent_client_id="agent-chat",
                agent_client_secret=SecretStr(AGENT_CLIENT_SECRET),
            )
            client = BackendClient(settings)
            try:
                context = Context(
                    user_token=token, user_id="", username="", roles=(), conversation_id=cid
                )
                return await writes.send(client, context, "POST", path, json=body, key=key)
            finally:
                await client.aclose()

        answers.append(asyncio.run(send()))

    stack.postgres.halt()
    try:
        away = stack.api.post(path, json=body, headers=headers)
        assert away.status_code == 503, away.text
        assert away.json()["error"]["code"] == "STORE_UNAVAILABLE"
        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(1.5)  # the write is retried while the database is away
        assert writer.is_alive()
    finally:
        stack.postgres.start()
    writer.join(timeout=60)
    assert answers and answers[0]["content"] == body["content"]
    again = stack.api.post(path, json=body, headers=headers)  # as if its answer had been lost
    assert again.status_code == 201 and again.json()["id"] == answers[0]["id"]
    assert _stored(stack.database_url, cid) == [("user", 1)]
    assert audit_count(stack.database_url, "conversation.message_append", resource_id=cid) == 1


def _stored(database_url: str, cid: str) -> list[tuple[str, int]]:
    """(role, rows) of the conversation's history rows, each idempotency key counted: a key
    stored twice would show as 2."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT role, count(*) FROM agent_messages WHERE conversation_id = %s"
            " GROUP BY role, idempotency_key ORDER BY min(id)",
            (cid,),
        ).fetchall()
    return [(str(role), int(n)) for role, n in rows]
