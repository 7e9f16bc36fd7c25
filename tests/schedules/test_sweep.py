"""A sweep validates every dashboard of the environment as its owner, diagnoses the newly
failing ones through the agent's diagnosis mode, lists the recovered, and notifies only when
something changed."""

from __future__ import annotations

import uuid

from tests.agent._diagnosis import answer as draft_round
from tests.agent._diagnosis import call, draft_of, new_id
from tests.schedules.support import create, history, runs, wait_runs

SUMMARY = "Chart SQL selects a renamed column"  # draft_of's conclusion
FAILING_IN_DEMO = 2  # the demo data's failing dashboards in production (#17 and #23)


def _settled(count):
    def done(items):
        return len(items) >= count and all(
            r["status"] != "running" and all(d["status"] != "pending" for d in r["deliveries"])
            for r in items
        )

    return done


def _diagnosed(fake_llm) -> int:
    return sum(1 for r in fake_llm.requests if "fails in production" in str(r["messages"][-1]))


def _run(sapi, headers, schedule, count):
    sapi.post(f"/api/schedules/{schedule['id']}/run", headers=headers)
    return wait_runs(sapi, headers, schedule["id"], _settled(count), timeout=120)[0]


def test_a_sweep_reports_new_failures_with_diagnoses_then_stays_silent_until_a_change(
    sapi, as_user, fake_llm, hooks, sql
):
    # each diagnosis, however many dashboards fail (other modules of this worker's shared backend
    # may have deployed more failing versions to production): one look at the logs, then a draft
    found = new_id("logs")
    fake_llm.add_rule("fails in production", call("query_logs", {"level": "error"}, id=found))
    fake_llm.add_rule("", draft_round(draft_of(found)), on="tool")
    path = f"/sweep-{uuid.uuid4().hex[:6]}"
    viewer = as_user["viewer"]
    schedule = create(
        sapi, viewer, name="Morning sweep", cron="0 7 * * *",
        sweep={"environment": "production"}, notify={"webhook": hooks.url(path)},
    )  # fmt: skip

    first = _run(sapi, viewer, schedule, 1)
    answer = history(sapi, viewer, schedule["conversation_id"])[-1]
    assert first["status"] == "ok" and first["deliveries"], (first, answer)
    assert first["deliveries"][0]["status"] == "delivered", first
    assert answer["id"] == first["message_id"] and "Newly failing:" in answer["content"]
    failing = _diagnosed(fake_llm)
    # at least the demo data's failing dashboards, each with its diagnosis and the evidence it cites
    assert answer["content"].count(SUMMARY) == failing >= FAILING_IN_DEMO, answer
    evidence = f"Evidence: Seen in {found} [SUPPORTED; {found}]"
    assert answer["content"].count(evidence) == failing, answer
    [hook] = hooks.at(path)
    assert "Newly failing" in hook.json()["text"]

    second = _run(sapi, viewer, schedule, 2)
    assert second["status"] == "ok" and second["deliveries"] == []
    assert "No change" in history(sapi, viewer, schedule["conversation_id"])[-1]["content"]
    assert _diagnosed(fake_llm) == failing and len(hooks.at(path)) == 1

    # a dashboard that failed at the previous run and no longer does is listed as recovered
    sql.execute(
        'UPDATE schedules SET sweep_state = sweep_state || \'{"999999": "Old revenue"}\''
        " WHERE id = %s",
        (schedule["id"],),
    )
    third = _run(sapi, viewer, schedule, 3)
    assert third["deliveries"][0]["status"] == "delivered"
    content = history(sapi, viewer, schedule["conversation_id"])[-1]["content"]
    assert "Recovered:" in content and "#999999 Old revenue" in content
    assert "Newly failing:" not in content and _diagnosed(fake_llm) == failing
    assert len(hooks.at(path)) == 2 and len(runs(sapi, viewer, schedule["id"])) == 3
