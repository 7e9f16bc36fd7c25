"""Deliveries of a run: an email through a real SMTP server, a signed webhook to a real HTTP
receiver, retried with backoff after failures, recorded per run, never failing the run."""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid

from tests.schedules.conftest import WEBHOOK_SECRET
from tests.schedules.support import create, wait_runs


def _delivered(items):
    return (
        bool(items)
        and all(d["status"] != "pending" for r in items for d in r["deliveries"])
        and all(r["status"] != "running" for r in items)
        and any(r["deliveries"] for r in items)
    )


def test_a_run_is_emailed_and_posted_to_a_signed_webhook(sapi, as_user, fake_llm, smtp, hooks):
    path = f"/ok-{uuid.uuid4().hex[:6]}"
    schedule = create(
        sapi,
        as_user["editor"],
        name="Morning numbers",
        cron="0 7 * * *",
        prompt="How many orders?",
        notify={"email": ["team@example.org"], "webhook": hooks.url(path)},
    )
    fake_llm.enqueue({"text": "There were 42 orders."})
    run_id = sapi.post(f"/api/schedules/{schedule['id']}/run", headers=as_user["editor"]).json()[
        "run_id"
    ]
    [run] = wait_runs(sapi, as_user["editor"], schedule["id"], _delivered)

    assert run["status"] == "ok"
    assert sorted((d["channel"], d["status"], d["attempts"]) for d in run["deliveries"]) == [
        ("email", "delivered", 1),
        ("webhook", "delivered", 1),
    ]
    [(to, mail)] = [m for m in smtp.mailbox.messages if "Morning numbers" in m[1]]
    assert to == ["team@example.org"] and "There were 42 orders." in mail
    assert "From: bi-bot@example.org" in mail
    [hook] = hooks.at(path)
    body = hook.json()
    assert body["text"].startswith("Morning numbers: ok") and "42 orders" in body["text"]
    assert body["schedule"] == {"id": schedule["id"], "name": "Morning numbers"}
    assert body["run"] == {
        "run_id": run_id,
        "status": "ok",
        "conversation_id": schedule["conversation_id"],
        "message_id": run["message_id"],
    }
    expected = hmac.new(WEBHOOK_SECRET.encode(), hook.body, hashlib.sha256).hexdigest()
    assert hook.headers["X-Signature"] == f"sha256={expected}"


def test_a_failing_webhook_is_retried_with_backoff_until_it_is_delivered(sapi, as_user, hooks):
    path = f"/flaky-{uuid.uuid4().hex[:6]}"
    hooks.fail_first[path] = 2
    schedule = create(
        sapi,
        as_user["viewer"],
        name="Flaky receiver",
        cron="0 7 * * *",
        prompt="Anything new?",
        notify={"webhook": hooks.url(path)},
    )
    started = time.monotonic()
    sapi.post(f"/api/schedules/{schedule['id']}/run", headers=as_user["viewer"])
    [run] = wait_runs(sapi, as_user["viewer"], schedule["id"], _delivered, timeout=120)

    assert run["status"] == "ok"
    assert run["deliveries"] == [{"channel": "webhook", "status": "delivered", "attempts": 3}]
    assert len(hooks.at(path)) == 3
    assert time.monotonic() - started < 120  # the third attempt within 2 minutes of the first
    bodies = {h.body for h in hooks.at(path)}
    assert len(bodies) == 1  # the same signed body each time


def test_a_delivery_that_keeps_failing_is_recorded_failed_and_the_run_stays_ok(
    sapi, as_user, hooks, smtp
):
    path = f"/down-{uuid.uuid4().hex[:6]}"
    hooks.fail_first[path] = 99
    schedule = create(
        sapi,
        as_user["viewer"],
        name="Receiver down",
        cron="0 7 * * *",
        prompt="Anything new?",
        notify={"webhook": hooks.url(path), "email": ["ops@example.org"]},
    )
    sapi.post(f"/api/schedules/{schedule['id']}/run", headers=as_user["viewer"])
    [run] = wait_runs(sapi, as_user["viewer"], schedule["id"], _delivered, timeout=120)

    assert run["status"] == "ok"
    by_channel = {d["channel"]: d for d in run["deliveries"]}
    assert by_channel["webhook"] == {"channel": "webhook", "status": "failed", "attempts": 3}
    assert by_channel["email"]["status"] == "delivered"
    assert len(hooks.at(path)) == 3


def test_a_delivery_whose_job_was_lost_is_queued_again_by_the_tick(sapi, as_user, hooks, sql):
    """A pending delivery nobody tried for longer than every retry delay (its process died
    before queueing it) is found by the next tick and delivered, once."""
    path = f"/lost-{uuid.uuid4().hex[:6]}"
    schedule = create(
        sapi,
        as_user["viewer"],
        name="Lost delivery",
        cron="0 7 * * *",
        prompt="Anything new?",
        notify={"webhook": hooks.url(path)},
    )
    sapi.post(f"/api/schedules/{schedule['id']}/run", headers=as_user["viewer"])
    [run] = wait_runs(sapi, as_user["viewer"], schedule["id"], _delivered, timeout=120)
    assert len(hooks.at(path)) == 1
    # as a process that died between committing the run's end and queueing its delivery leaves it
    sql.execute(
        "UPDATE schedule_deliveries SET status = 'pending', attempts = 0,"
        " updated_at = now() - interval '6 minutes' WHERE run_id = %s",
        (run["run_id"],),
    )
    deadline = time.monotonic() + 60
    while len(hooks.at(path)) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert len(hooks.at(path)) == 2  # queued again by a tick, not by anyone's request
    [again] = wait_runs(sapi, as_user["viewer"], schedule["id"], _delivered, timeout=60)
    assert again["deliveries"] == [{"channel": "webhook", "status": "delivered", "attempts": 1}]
    time.sleep(3)  # later ticks do not queue it again
    assert len(hooks.at(path)) == 2
