"""More than one agent process on one Postgres: confirmations are durable and shared, a dead
process frees its conversations within seconds, and a run that outlives its deadline ends with
BUDGET_EXHAUSTED. The extra process of this module runs with a short run deadline (6 s) and
lease (2 s); its other flows take well under a second."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from tests.agent.support import (
    Chat,
    assert_valid_for_any_provider,
    collect,
    confirm_id,
    error_code,
    kinds,
    text_of,
    wait_checkpointed_call,
    wait_for,
)
from tests.agent.test_cancel import SLOW_SQL, active, wait_inactive

DEPLOY = {"dashboard_id": 42, "ref": "main", "environment": "staging"}
# the deadline leaves a loaded machine room to see the lease kept past its TTL before the end
ENV = {"AGENT__RUN_DEADLINE_S": "6", "AGENT__LEASE_TTL_S": "2"}


class Replica:
    """A second agent process that a test may kill and replace."""

    def __init__(self, start_agent, stack: ExitStack) -> None:
        self._start = start_agent
        self._stack = stack
        self.url, self.proc = stack.enter_context(start_agent(**ENV))

    def restart_after_kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.url, self.proc = self._stack.enter_context(self._start(**ENV))


@pytest.fixture(scope="module")
def replica(start_agent) -> Iterator[Replica]:
    with ExitStack() as stack:
        yield Replica(start_agent, stack)


def _deploy_pending(chat: Chat, token: str, cid: str, fake_llm) -> str:
    fake_llm.enqueue({"tool_calls": [{"name": "deploy_dashboard", "args": DEPLOY}]})
    outputs = chat.send(token, cid, "Deploy 42 to staging")
    assert kinds(outputs[-1]) == ["confirm_required"]
    return confirm_id(outputs)


def test_a_confirmation_started_on_one_process_is_confirmed_on_another(
    chat, replica, tokens, conversation, fake_llm
):
    cid = conversation()
    call = _deploy_pending(chat, tokens["admin"], cid, fake_llm)
    fake_llm.enqueue({"text": "Deployed."})

    outputs = Chat(replica.url).decide(tokens["admin"], cid, "confirm", call)

    assert kinds(outputs[-1]) == ["tool_end", "text"]
    assert outputs[-1][0]["metadata"]["output"]["environment"] == "staging"
    assert_valid_for_any_provider(fake_llm.requests[-1])


def test_a_run_past_its_deadline_ends_with_budget_exhausted_and_keeps_its_text(
    replica, tokens, conversation, fake_llm, api
):
    cid = conversation()
    fake_llm.enqueue({"tokens": 200, "delay_ms": 50})  # 10 s of answer, past the 6 s deadline
    chat = Chat(replica.url)

    job = chat.submit(tokens["admin"], cid, "Talk for a long time")
    wait_for(job, lambda m: bool(text_of(m)))
    time.sleep(2.5)  # past the 2 s lease: the heartbeat keeps it
    assert active(api, tokens["admin"], cid)
    outputs = collect(job)

    assert error_code(outputs) == "BUDGET_EXHAUSTED"
    assert text_of(outputs[-1]).startswith("t0 t1")
    fake_llm.enqueue({"text": "Short now."})
    assert text_of(chat.send(tokens["admin"], cid, "Be brief")[-1]) == "Short now."
    assert_valid_for_any_provider(fake_llm.requests[-1])


def test_a_pending_confirmation_survives_killing_and_restarting_the_agent(
    chat, replica, tokens, conversation, fake_llm, sql, api, database_url
):
    cid, busy = conversation(), conversation()
    call = _deploy_pending(Chat(replica.url), tokens["admin"], cid, fake_llm)
    before = sql.execute("select count(*) from dashboard_deployments").fetchone()[0]
    fake_llm.enqueue(
        {
            "tool_calls": [
                {"name": "execute_sql", "args": {"datasource": "sample", "query": SLOW_SQL}}
            ]
        }
    )
    running = Chat(replica.url).submit(tokens["admin"], busy, "Count to twenty million")
    wait_for(running, lambda m: "tool_start" in kinds(m))
    # Kill once the call is durable (seeing its card is not enough: the card streams before
    # the step's checkpoint is stored), so the next turn has a call to close as cancelled.
    wait_checkpointed_call(database_url, busy, "execute_sql")

    replica.restart_after_kill()
    fake_llm.enqueue({"text": "Deployed after the restart."})
    outputs = Chat(replica.url).decide(tokens["admin"], cid, "confirm", call)

    assert kinds(outputs[-1]) == ["tool_end", "text"]
    assert text_of(outputs[-1]) == "Deployed after the restart."
    assert sql.execute("select count(*) from dashboard_deployments").fetchone()[0] == before + 1
    # The killed run's lease expired by itself; its open tool call is closed on the next turn.
    wait_inactive(api, tokens["admin"], busy, timeout=5)
    fake_llm.enqueue({"text": "Picking up again."})
    assert text_of(chat.send(tokens["admin"], busy, "Are you there?")[-1]) == "Picking up again."
    request = fake_llm.requests[-1]
    assert_valid_for_any_provider(request)
    assert "CANCELLED" in request["messages"][-2]["content"]
