"""A sweep validates every dashboard of the environment as its owner, diagnoses the newly
failing ones through the agent's diagnosis mode, lists the recovered, and notifies only when
something changed."""

from __future__ import annotations

import re
import uuid

from tests.agent._diagnosis import answer as draft_round
from tests.agent._diagnosis import call, draft_of, new_id
from tests.backend.dashboards.conftest import BROKEN_SQL, _insert, chart
from tests.schedules.support import create, history, runs, wait_runs

SUMMARY = "Chart SQL selects a renamed column"  # draft_of's conclusion


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
    # A failing dashboard of this test's own in production: the worker's shared backend may
    # hold more (other modules deploy failing versions) or fewer (a datasource migration fixes
    # the demo's #23, a fixed version of #17 may be deployed) than the seed's two.
    title = f"Sweep scratch {uuid.uuid4().hex[:6]}"
    own = _insert(sql, [chart("conversions", BROKEN_SQL, ["campaign_id"])], title, True)
    try:
        _sweep(sapi, as_user, fake_llm, hooks, sql, own, title)
    finally:  # served nowhere: later sweeps of this worker skip it
        sql.execute("DELETE FROM dashboard_environments WHERE dashboard_id = %s", (own,))


def _sweep(sapi, as_user, fake_llm, hooks, sql, own: int, title: str) -> None:
    # each diagnosis, however many dashboards fail: one look at the logs, then a draft
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
    header = re.search(r"(\d+) dashboards checked, (\d+) failing; (\d+) newly", answer["content"])
    assert header is not None, answer
    # every failing dashboard is new at the first run, diagnosed once, with the evidence it cites
    assert int(header[2]) == int(header[3]) == failing >= 1, answer
    assert answer["content"].count(SUMMARY) == failing, answer
    assert f"- #{own} {title}: SQL_ERROR" in answer["content"], answer
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
