"""Checkpoint retention (backend/retention): live threads are pruned to their latest
checkpoints and idle ones cleared, never a thread a run holds or one waiting for a confirmation,
and one sweep at a time across processes. Every thread is driven through the real agent's /chat
route with the scripted LLM; sweeps run here against the suite's database (the suite's backend
runs with RETENTION__ENABLED=false so that no sweep of its own interferes)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from backend.config import RetentionSettings
from backend.db import create_engine
from backend.retention.sweep import LOCK_KEY, SweepReport, run_periodically, sweep
from tests.agent.conftest import AgentProcess
from tests.agent.support import (
    Chat,
    confirm_id,
    error_code,
    history,
    kinds,
    text_of,
    thread_messages,
)
from tests.conftest import bearer

DEPLOY = {"dashboard_id": 42, "ref": "main", "environment": "staging"}
KEEP = 3
DAY_S = 86400.0
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")

# The channel versions the latest KEEP checkpoints of a thread read, and whether a blob is
# stored for each (values a checkpoint holds inline, e.g. counters, have none).
REFERENCED = """
select v.key, v.value, exists (
    select 1 from checkpoint_blobs b
    where b.thread_id = c.thread_id and b.checkpoint_ns = c.checkpoint_ns
    and b.channel = v.key and b.version = v.value
)
from checkpoints c cross join lateral jsonb_each_text(c.checkpoint -> 'channel_versions') v
where c.thread_id = %s and c.checkpoint_id in (
    select checkpoint_id from checkpoints where thread_id = %s
    order by checkpoint_id desc limit %s
)
"""


def sweep_now(database_url: str, **overrides: Any) -> SweepReport:
    """One sweep, as a replica's job would run it."""
    settings = RetentionSettings(**{"keep_latest": KEEP, "idle_ttl_s": DAY_S, **overrides})

    async def once() -> SweepReport:
        engine = create_engine(database_url, pool_size=2)
        try:
            return await sweep(engine, settings)
        finally:
            await engine.dispose()

    return asyncio.run(once())


@pytest.fixture(scope="module")
def chat(start_agent: AgentProcess) -> Iterator[Chat]:
    """An agent that snapshots its messages at every update: each checkpoint can then be kept
    alone, as before deltas. How a thread of deltas is pruned back to its snapshot is
    tests/agent/test_delta_state.py's."""
    with start_agent(AGENT__SNAPSHOT_EVERY="1") as (base, _proc):
        yield Chat(base)


def latest_state(database_url: str, cid: str) -> dict[str, Any]:
    """The channel values LangGraph loads for the thread (what the next run starts from), and
    its messages as the agent rebuilds them."""

    async def load() -> dict[str, Any]:
        async with AsyncPostgresSaver.from_conn_string(database_url) as saver:
            found = await saver.aget_tuple({"configurable": {"thread_id": cid}})
            assert found is not None
            return dict(found.checkpoint["channel_values"])

    messages = [(m.type, m.id, m.content) for m in thread_messages(database_url, cid)]
    assert messages
    return {**asyncio.run(load()), "messages": messages}


def rows(sql: Any, cid: str) -> dict[str, int]:
    return {
        t: sql.execute(f"select count(*) from {t} where thread_id = %s", (cid,)).fetchone()[0]
        for t in TABLES
    }


def referenced(sql: Any, cid: str) -> set[tuple[str, str, bool]]:
    return set(sql.execute(REFERENCED, (cid, cid, KEEP)).fetchall())


def make_idle(sql: Any, cid: str) -> None:
    """Date the thread's checkpoints two days back, as if nobody had written for that long."""
    sql.execute(
        "update checkpoints set checkpoint = jsonb_set(checkpoint, '{ts}',"
        " to_jsonb((now() - interval '2 days')::text)) where thread_id = %s",
        (cid,),
    )


def talk(chat, token: str, cid: str, fake_llm, turns: int) -> None:
    """`turns` turns, the second with a tool call, so that the thread has many checkpoints."""
    for i in range(turns):
        if i == 1:
            fake_llm.enqueue(
                {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}]},
                {"text": f"answer {i}"},
            )
        else:
            fake_llm.enqueue({"text": f"answer {i}"})
        final = chat.send(token, cid, f"question {i}")[-1]
        assert text_of(final) == f"answer {i}", final


def sent_texts(fake_llm) -> str:
    """Everything the model was sent in the last request."""
    return json.dumps(fake_llm.requests[-1]["messages"])


def test_pruning_keeps_the_latest_checkpoints_with_their_blobs_and_the_next_turn_sees_it_all(
    chat, tokens, conversation, fake_llm, sql, database_url
):
    cid = conversation()
    talk(chat, tokens["admin"], cid, fake_llm, turns=4)
    before, needed = rows(sql, cid), referenced(sql, cid)
    state = latest_state(database_url, cid)
    assert before["checkpoints"] > 3 * KEEP and any(stored for *_, stored in needed)

    report = sweep_now(database_url)

    after = rows(sql, cid)
    assert report.ran and report.threads["pruned"] >= 1
    assert after["checkpoints"] == KEEP and after["checkpoint_blobs"] < before["checkpoint_blobs"]
    assert referenced(sql, cid) == needed  # every blob a kept checkpoint reads is still there
    kept_blobs = {(channel, version) for channel, version, _ in needed}
    stored_blobs = set(
        sql.execute(
            "select channel, version from checkpoint_blobs where thread_id = %s", (cid,)
        ).fetchall()
    )
    assert stored_blobs <= kept_blobs  # and no other
    orphan_writes = sql.execute(
        "select count(*) from checkpoint_writes w where thread_id = %s and not exists ("
        " select 1 from checkpoints c where c.thread_id = w.thread_id"
        " and c.checkpoint_id = w.checkpoint_id)",
        (cid,),
    ).fetchone()[0]
    assert orphan_writes == 0
    assert latest_state(database_url, cid) == state

    fake_llm.enqueue({"text": "answer 4"})
    final = chat.send(tokens["admin"], cid, "question 4")[-1]

    assert text_of(final) == "answer 4"
    seen = sent_texts(fake_llm)
    assert all(f"question {i}" in seen and f"answer {i}" in seen for i in range(4))
    assert '"role": "tool"' in seen  # the tool call and its result of turn 1
    assert sweep_now(database_url).threads["pruned"] >= 1 and rows(sql, cid)["checkpoints"] == KEEP


def test_a_thread_whose_lease_a_run_holds_is_untouched(
    chat, tokens, conversation, fake_llm, sql, database_url, api, as_agent
):
    cid = conversation()
    talk(chat, tokens["admin"], cid, fake_llm, turns=3)
    make_idle(sql, cid)
    lease = f"/api/agent/conversations/{cid}/lease"
    taken = api.put(lease, json={"holder": "another-run", "ttl_s": 60}, headers=as_agent["admin"])
    assert taken.status_code == 200, taken.text
    before = rows(sql, cid)

    report = sweep_now(database_url)

    assert report.threads["leased"] >= 1 and rows(sql, cid) == before
    holder = sql.execute(
        "select holder from agent_runs where conversation_id = %s", (cid,)
    ).fetchone()
    assert holder == ("another-run",)  # the run's lease is as it was

    released = api.delete(lease, params={"holder": "another-run"}, headers=as_agent["admin"])
    assert released.status_code == 204
    assert sweep_now(database_url).threads["cleared"] >= 1 and rows(sql, cid)["checkpoints"] == 0


def test_a_pending_confirmation_is_untouched_even_when_idle_and_its_confirm_still_deploys(
    chat, tokens, conversation, fake_llm, sql, database_url
):
    cid = conversation()
    talk(chat, tokens["admin"], cid, fake_llm, turns=2)
    fake_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": DEPLOY}]})
    outputs = chat.send(tokens["admin"], cid, "Deploy dashboard 42 to staging")
    assert kinds(outputs[-1]) == ["confirm_required"]
    call = confirm_id(outputs)
    make_idle(sql, cid)
    before = rows(sql, cid)

    report = sweep_now(database_url, keep_latest=1)

    assert report.threads["pending"] >= 1 and rows(sql, cid) == before
    deployments = sql.execute("select count(*) from dashboard_deployments").fetchone()[0]
    fake_llm.enqueue({"text": "Deployed to staging."})

    final = chat.decide(tokens["admin"], cid, "confirm", call)[-1]

    assert kinds(final) == ["tool_end", "text"] and text_of(final) == "Deployed to staging."
    deployment_id = final[0]["metadata"]["output"]["id"]
    assert sql.execute("select count(*) from dashboard_deployments").fetchone()[0] == (
        deployments + 1
    )
    audit = sql.execute(
        "select actor_username, service_client_id from assistant_audit"
        " where action = 'dashboard.deploy' and details->>'deployment_id' = %s",
        (str(deployment_id),),
    ).fetchall()
    assert audit == [("admin", "agent-chat")]
    # Answered, the thread is an ordinary one again: pruned, and the next turn works.
    assert sweep_now(database_url).threads["pruned"] >= 1
    assert rows(sql, cid)["checkpoints"] == KEEP
    fake_llm.enqueue({"text": "It is live on staging."})
    assert text_of(chat.send(tokens["admin"], cid, "Is it live?")[-1]) == "It is live on staging."
    assert "Deploy dashboard 42 to staging" in sent_texts(fake_llm)


def test_an_idle_thread_is_cleared_its_history_stays_and_the_next_turn_works(
    chat, tokens, conversation, fake_llm, sql, database_url, api
):
    cid = conversation()
    talk(chat, tokens["admin"], cid, fake_llm, turns=2)
    fresh = conversation()
    talk(chat, tokens["admin"], fresh, fake_llm, turns=1)
    make_idle(sql, cid)
    messages = history(api, tokens["admin"], cid)

    report = sweep_now(database_url)

    assert report.threads["cleared"] >= 1
    assert rows(sql, cid) == dict.fromkeys(TABLES, 0)
    assert rows(sql, fresh)["checkpoints"] > 0  # a thread used today stays
    audit = sql.execute(
        "select actor_username, (details->>'checkpoint_rows_deleted')::int from assistant_audit"
        " where action = 'conversation.checkpoints_expire' and resource_id = %s",
        (cid,),
    ).fetchall()
    assert len(audit) == 1 and audit[0][0] == "retention" and audit[0][1] > 0
    assert history(api, tokens["admin"], cid) == messages  # the conversation's history stays
    conversation_row = api.get(
        f"/api/assistant/conversations/{cid}", headers=bearer(tokens["admin"])
    ).json()
    assert conversation_row["is_archived"] is False

    fake_llm.enqueue({"text": "answer 2"})
    final = chat.send(tokens["admin"], cid, "question 2")[-1]

    assert text_of(final) == "answer 2"
    seen = sent_texts(fake_llm)
    assert "question 0" in seen and "answer 1" in seen  # the model is given the history
    assert error_code(chat.decide(tokens["admin"], cid, "confirm", "call_x")) == (
        "NO_PENDING_CONFIRMATION"
    )


def _advisory_lock_held(sql: Any) -> bool:
    high, low = (LOCK_KEY >> 32) & 0xFFFFFFFF, LOCK_KEY & 0xFFFFFFFF
    return bool(
        sql.execute(
            "select count(*) from pg_locks where locktype = 'advisory' and granted"
            " and classid::bigint = %s and objid::bigint = %s",
            (high, low),
        ).fetchone()[0]
    )


def test_two_sweeps_at_once_one_prunes_and_the_other_skips_without_failing(
    chat, tokens, conversation, fake_llm, sql, database_url
):
    cid = conversation()
    talk(chat, tokens["admin"], cid, fake_llm, turns=2)
    results: dict[str, SweepReport] = {}
    # A run taking the lease of this thread right now (its transaction not yet committed)
    # holds the first sweep on it, so the two sweeps surely overlap.
    with psycopg.connect(database_url) as run:
        run.execute(
            "insert into agent_runs (conversation_id, holder, acquired_at, expires_at)"
            " values (%s, 'a-run-starting', now(), now() + interval '1 minute')",
            (cid,),
        )
        first = threading.Thread(
            target=lambda: results.update(first=sweep_now(database_url, lock_timeout_s=30))
        )
        first.start()
        deadline = time.monotonic() + 20
        while not _advisory_lock_held(sql):
            assert time.monotonic() < deadline, "the first sweep never started"
            time.sleep(0.05)
        results["second"] = sweep_now(database_url)
        assert first.is_alive()  # still waiting on the thread's lease row
        run.rollback()  # the run gave up: its lease row never existed
    first.join(timeout=30)

    assert results["second"].ran is False and not results["second"].threads
    assert results["first"].ran and results["first"].threads["pruned"] >= 1
    assert rows(sql, cid)["checkpoints"] == KEEP
    assert not _advisory_lock_held(sql)  # given back for the next sweep


def test_two_retention_processes_at_once_both_exit_cleanly_and_prune_once(
    chat, tokens, conversation, fake_llm, sql, database_url, seeded
):
    cid = conversation()
    talk(chat, tokens["admin"], cid, fake_llm, turns=2)
    env = {**os.environ, **seeded, "RETENTION__KEEP_LATEST": str(KEEP)}
    argv = [sys.executable, "-m", "agent_chat.cli", "retention"]
    procs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE) for _ in range(2)]
    outputs = [p.communicate(timeout=60)[0] for p in procs]

    assert [p.returncode for p in procs] == [0, 0]
    reports = [json.loads(out.splitlines()[-1]) for out in outputs]
    assert any(r["ran"] for r in reports)
    assert sum(r["threads"].get("pruned", 0) for r in reports) >= 1
    assert rows(sql, cid)["checkpoints"] == KEEP


def test_the_periodic_job_sweeps_on_its_interval(
    chat, tokens, conversation, fake_llm, sql, database_url
):
    cid = conversation()
    talk(chat, tokens["admin"], cid, fake_llm, turns=2)
    settings = RetentionSettings(keep_latest=KEEP, idle_ttl_s=DAY_S, interval_s=0.2)

    async def run_for_a_while() -> None:
        engine = create_engine(database_url, pool_size=2)
        job = asyncio.create_task(run_periodically(engine, settings))
        try:
            deadline = time.monotonic() + 15
            while rows(sql, cid)["checkpoints"] > KEEP and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
        finally:
            job.cancel()
            await asyncio.gather(job, return_exceptions=True)
            await engine.dispose()

    asyncio.run(run_for_a_while())

    assert rows(sql, cid)["checkpoints"] == KEEP
    assert not _advisory_lock_held(sql)
