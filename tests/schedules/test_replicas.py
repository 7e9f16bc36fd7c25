"""Two backends (each running the schedules' worker) and two agents on one database: each due
time fires exactly once; missed firings follow the grace rule; a backend killed mid-firing
leaves its run ended RUN_INTERRUPTED, never run twice."""

from __future__ import annotations

import itertools
import os
import signal
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.schedules.support import create, finished, runs, wait_runs


@pytest.fixture(scope="module")
def pair(start_backend, start_agent) -> Iterator[list[tuple[str, Any]]]:
    with ExitStack() as stack:
        second_agent, _ = stack.enter_context(start_agent())
        first = stack.enter_context(start_backend())
        second = stack.enter_context(start_backend(SCHEDULES__AGENT_URL=second_agent))
        yield [first, second]


@pytest.fixture(scope="module")
def client(pair) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=pair[0][0], timeout=30) as found:
        yield found


def _asked(fake_llm, marker: str) -> int:
    return sum(1 for r in fake_llm.requests if marker in str(r["messages"][-1].get("content")))


def test_each_due_time_fires_exactly_once_across_two_backends(client, as_user, fake_llm, sql):
    marker = uuid.uuid4().hex[:8]
    viewer = as_user["viewer"]
    schedule = create(
        client, viewer, name=f"every 2 s {marker}", every_s=2, prompt=f"tick {marker}"
    )
    time.sleep(9)
    client.patch(f"/api/schedules/{schedule['id']}", json={"enabled": False}, headers=viewer)
    items = wait_runs(
        client, viewer, schedule["id"], lambda i: all(r["status"] != "running" for r in i)
    )

    rows = sql.execute(
        "SELECT due_at FROM schedule_runs WHERE schedule_id = %s ORDER BY due_at",
        (schedule["id"],),
    ).fetchall()
    due = [r[0] for r in rows]
    assert len(due) >= 3 and len(set(due)) == len(due), due
    assert all((b - a).total_seconds() == 2 for a, b in itertools.pairwise(due)), due
    assert {r["status"] for r in items} == {"ok"}, items
    assert _asked(fake_llm, marker) == len(items)  # the agent was asked once per firing


def test_missed_firings_run_once_within_the_grace_and_are_skipped_beyond_it(client, as_user, sql):
    viewer = as_user["viewer"]
    hourly = create(client, viewer, name="hourly", cron="0 * * * *", prompt="hourly question")
    yearly = create(client, viewer, name="yearly", cron="0 0 1 1 *", prompt="yearly question")
    # as if every process had been down: 5 hourly firings missed, the last < 1 h ago; the
    # yearly one missed by months (schedules.misfire_grace_s is 3600)
    sql.execute(
        "UPDATE schedules SET next_run_at = now() - interval '5 hours' WHERE id = %s",
        (hourly["id"],),
    )
    sql.execute(
        "UPDATE schedules SET next_run_at = now() - interval '300 days' WHERE id = %s",
        (yearly["id"],),
    )
    sql.commit()

    [caught_up] = wait_runs(client, viewer, hourly["id"], finished())
    [skipped] = wait_runs(client, viewer, yearly["id"], finished())
    time.sleep(2.5)

    assert caught_up["status"] == "ok" and len(runs(client, viewer, hourly["id"])) == 1
    assert skipped["status"] == "skipped" and skipped["message_id"] is None
    assert len(runs(client, viewer, yearly["id"])) == 1
    for schedule in (hourly, yearly):
        current = client.get(f"/api/schedules/{schedule['id']}", headers=viewer).json()
        assert datetime.fromisoformat(current["next_run_at"]) > datetime.now(UTC)


def test_a_disabled_schedule_does_not_catch_up_when_enabled_again(client, as_user, sql):
    viewer = as_user["viewer"]
    schedule = create(client, viewer, name="paused", every_s=2, prompt="paused question")
    path = f"/api/schedules/{schedule['id']}"
    client.patch(path, json={"enabled": False}, headers=viewer)
    time.sleep(5)  # two or three due times pass while it is disabled

    enabled = client.patch(path, json={"enabled": True}, headers=viewer).json()
    assert datetime.fromisoformat(enabled["next_run_at"]) > datetime.now(UTC)
    time.sleep(1.0)
    client.patch(path, json={"enabled": False}, headers=viewer)
    assert len(runs(client, viewer, schedule["id"])) <= 1


def _wait_taken(sql, run_id: str, timeout: float = 30) -> None:
    """Until a worker is executing the firing (its job is `doing`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = sql.execute(
            "SELECT 1 FROM procrastinate_jobs WHERE task_name = 'schedules.fire'"
            " AND status = 'doing' AND args->>'run_id' = %s",
            (run_id,),
        ).fetchone()
        if row is not None:
            return
        time.sleep(0.1)
    raise AssertionError("no worker took the firing")


def _wait_asked(fake_llm, marker: str, timeout: float = 30) -> None:
    """Until the firing's turn has reached the model (it is then streaming for ~7 s)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _asked(fake_llm, marker) == 1:
            return
        time.sleep(0.05)
    raise AssertionError("the firing never reached the model")


def test_backends_killed_mid_firing_leave_the_run_interrupted_and_never_run_twice(
    pair, start_backend, as_user, fake_llm, sql
):
    """Every backend is killed while one executes the firing; the next one to start ends the
    run RUN_INTERRUPTED once the dead workers' heartbeats are stale, and runs nothing again."""
    marker = uuid.uuid4().hex[:8]
    viewer = as_user["viewer"]
    words = " ".join(f"w{i}" for i in range(12))
    fake_llm.enqueue({"text": words, "delay_ms": 600})  # ~7 s of streaming
    with httpx.Client(base_url=pair[1][0], timeout=30) as client:
        schedule = create(client, viewer, name=f"slow {marker}", cron="0 7 * * *", prompt=marker)
        started = client.post(f"/api/schedules/{schedule['id']}/run", headers=viewer)
    run_id = started.json()["run_id"]
    _wait_taken(sql, run_id)
    # killed only once the model is answering: a kill before that would prove nothing about
    # "never run twice" (and the model would rightly never be asked)
    _wait_asked(fake_llm, marker)
    for _url, proc in pair:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    with start_backend() as (url, _proc), httpx.Client(base_url=url, timeout=30) as client:
        [run] = wait_runs(client, viewer, schedule["id"], finished(), timeout=60)
    assert run["run_id"] == run_id and run["status"] == "failed", run
    assert run["error"]["code"] == "RUN_INTERRUPTED"
    assert _asked(fake_llm, marker) == 1
