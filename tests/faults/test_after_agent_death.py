"""Fault: the agent answering a conversation is SIGKILLed, and the person goes on at once
through another agent (the gateway's next choice).

- A new message is answered, never refused as busy: the dead holder's lease is taken over
  (agent/runs/takeover.py: its owner URL refuses the connection), audited; both questions are
  stored once, in order. A live run on another agent still makes the conversation busy.
- A file uploaded to the dead agent is still read when the upload folder is shared (as `up`
  and docker-compose share it), and refused with a clear error (upload it again) when it was
  not: never silently dropped from the question.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.agent import raw_gradio
from tests.agent.support import (
    GRADIO,
    Chat,
    error_code,
    history,
    kinds,
    of_type,
    text_of,
    wait_for,
)
from tests.faults.support import Service, roles_of, wait_until

FILE_META = {"_type": "gradio.FileData"}


@pytest.fixture(scope="module")
def spares(stack) -> Iterator[list[Service]]:
    made = [stack.new_agent().spawn(), stack.new_agent().spawn(), stack.new_agent().spawn()]
    try:
        yield [service.ready() for service in made]
    finally:
        for service in made:
            service.stop()


@pytest.fixture()
def doomed(spares: list[Service]) -> Service:
    return spares.pop()


def takeovers(database_url: str, cid: str) -> list[str]:
    """The dead holders the conversation's lease was taken from (audit rows)."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT details->>'took_over' FROM assistant_audit WHERE action = "
            "'conversation.lease_acquire' AND resource_id = %s AND details ? 'took_over'",
            [cid],
        ).fetchall()
    return [str(r[0]) for r in rows]


def test_a_message_sent_at_once_after_the_answering_agent_died_is_answered(stack, doomed):
    cid, token = stack.conversation(), stack.tokens["admin"]
    stack.llm.enqueue({"hang_after_tokens": 3, "text": "one two three four five six"})
    job = Chat(doomed.url).submit(token, cid, "First question")
    wait_for(job, lambda m: len(text_of(m).split()) >= 3)
    wait_until(lambda: history(stack.api, token, cid), what="the first question stored")

    doomed.kill()

    stack.llm.enqueue({"text": "Here is the answer."})
    outputs = stack.chat.send(token, cid, "Second question")  # no wait for the lease's TTL

    assert error_code(outputs) is None, outputs[-1]
    assert text_of(outputs[-1]) == "Here is the answer."
    rows = history(stack.api, token, cid)
    assert roles_of(rows) == ["user", "user", "assistant"]
    assert [r["content"] for r in rows[:2]] == ["First question", "Second question"]
    (dead,) = takeovers(stack.database_url, cid)
    assert f":{doomed.proc.pid}:" in dead  # taken from the killed process, not waited out


def test_a_run_alive_on_another_agent_still_keeps_the_conversation_busy(stack, spares):
    cid, token = stack.conversation(), stack.tokens["admin"]
    stack.llm.enqueue({"hang_after_tokens": 2, "text": "slow slow slow slow"})
    job = Chat(spares[0].url).submit(token, cid, "A long answer")
    wait_for(job, lambda m: len(text_of(m).split()) >= 2)

    outputs = stack.chat.send(token, cid, "Are you there?")

    assert error_code(outputs) == "CONVERSATION_BUSY"
    assert takeovers(stack.database_url, cid) == []
    job.cancel()


def _upload(agent_url: str, token: str, name: str, body: str) -> str:
    answer = httpx.post(
        f"{agent_url}{GRADIO}/gradio_api/upload",
        headers={"Authorization": f"Bearer {token}"},
        files={"files": (name, body.encode(), "text/csv")},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    (path,) = answer.json()
    return str(path)


def _ask(stack, token: str, cid: str, path: str, name: str) -> list:
    message = {
        "text": "Summarise it",
        "files": [{"path": path, "orig_name": name, "meta": FILE_META}],
    }
    return raw_gradio.call(stack.agent.url, token, [message, cid, "", "", ""])


def test_a_file_uploaded_to_an_agent_that_died_is_still_read_from_the_shared_folder(stack, doomed):
    cid, token = stack.conversation(), stack.tokens["admin"]
    marker = f"MARKER-{uuid.uuid4().hex}"
    path = _upload(doomed.url, token, "sales.csv", f"name,value\n{marker},1\n")

    doomed.kill()

    stack.llm.enqueue({"text": "One row."})
    outputs = _ask(stack, token, cid, path, "sales.csv")
    assert text_of(outputs[-1]) == "One row.", outputs[-1]
    assert marker in str(stack.llm.requests[-1])
    (user, _answer) = history(stack.api, token, cid)
    assert [a["name"] for a in user["metadata"]["attachments"]] == ["sales.csv"]


def test_a_file_uploaded_to_a_dead_agent_of_another_folder_is_refused_clearly(
    stack, tmp_path: Path
):
    cid, token = stack.conversation(), stack.tokens["admin"]
    elsewhere = tmp_path / "other-host-uploads"
    other = Service(
        ["agent"],
        {**stack.agent_env, "GRADIO_TEMP_DIR": str(elsewhere)},
        health_path="/healthz",
        log_path=stack.logs / "agent-elsewhere.log",
    ).start()
    try:
        path = _upload(other.url, token, "sales.csv", "name,value\nx,1\n")
        assert Path(path).is_relative_to(elsewhere.resolve())
    finally:
        other.kill()

    outputs = _ask(stack, token, cid, path, "sales.csv")

    assert error_code(outputs) == "UNSUPPORTED_FILE"
    (error,) = of_type(outputs[-1], "error")
    assert error["metadata"]["details"]["reason"] == "elsewhere"
    assert "sales.csv" in error["content"] and "upload it again" in error["content"]
    assert path not in str(error)  # never the server path
    assert stack.llm.requests == []  # nothing asked, nothing half-stored
    assert history(stack.api, token, cid) == []
    assert "error" in kinds(outputs[-1])
