"""A workflow cut off by the run's deadline, on an agent process of its own with a short one: the
step under way fails on the timeline and in its row (it never stays "running")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agent.support import Chat, error_code, of_type
from tests.agent.test_workflows import execution_rows, step_rows, steps_of


@pytest.fixture(scope="module")
def short(start_agent) -> Iterator[Chat]:
    with start_agent(AGENT__RUN_DEADLINE_S="3", LLM__REQUEST_TIMEOUT_S="30") as (base, _proc):
        yield Chat(base)


def test_the_deadline_fails_the_step_under_way_and_the_execution(
    short, tokens, conversation, fake_llm, sql
):
    cid = conversation()
    fake_llm.enqueue({"hang_s": 20, "text": "late"})  # the llm_call step outlives the run

    outputs = short.send(
        tokens["admin"],
        cid,
        "Describe table sample.orders please",
        options={"mode": "yaml", "workflow": "explore_table"},
    )

    last = outputs[-1]
    assert error_code(outputs) == "BUDGET_EXHAUSTED"
    summary = [s for s in steps_of(last) if s["name"] == "summary"]
    assert summary and summary[-1]["status"] == "failed"
    assert summary[-1]["error"]["code"] == "BUDGET_EXHAUSTED"
    assert not [s for s in steps_of(last) if s["status"] == "running"]

    ((execution_id, _name, status, _answered, _message),) = execution_rows(sql, cid)
    assert status == "failed"
    rows = {row[1]: row for row in step_rows(sql, execution_id)}
    assert [rows[n][3] for n in ("schema", "sample")] == ["completed", "completed"]
    assert rows["summary"][3] == "failed" and rows["summary"][5]["code"] == "BUDGET_EXHAUSTED"
    assert of_type(last, "error")[0]["metadata"]["message"]
