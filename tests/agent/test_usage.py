"""Usage over the real processes: every model call of every mode is recorded once with the usage
the scripted model reported (or an estimate for a stopped stream), the same sums in the user's
page, the conversation and the admin view; a daily budget refuses before any model call and
stops a run between two calls, keeping its partial text."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.agent._diagnosis import answer, draft_of
from tests.agent.evaluation.support import run_eval, write_cases
from tests.agent.support import Chat, error_code, history, of_type, text_of, wait_for
from tests.conftest import bearer, login

P, C = 101, 7  # the usage every scripted answer reports
USAGE = {"prompt_tokens": P, "completion_tokens": C}
CONV = "/api/assistant/conversations"


class User:
    def __init__(self, api: httpx.Client, admin: str) -> None:
        self.username = f"usage_{uuid.uuid4().hex[:10]}"
        password = f"pw-{uuid.uuid4().hex}"
        created = api.post(
            "/api/admin/users",
            json={"username": self.username, "password": password, "roles": ["viewer"]},
            headers=bearer(admin),
        )
        assert created.status_code == 201, created.text
        self.id = str(created.json()["id"])
        self.token = login(api, self.username, password)
        conv = api.post(CONV, json={}, headers=bearer(self.token))
        assert conv.status_code == 201, conv.text
        self.cid = str(conv.json()["id"])


@pytest.fixture()
def user(api: httpx.Client, tokens: dict[str, str]) -> Callable[[], User]:
    return lambda: User(api, tokens["admin"])


def sums(body: dict[str, Any]) -> tuple[int, int, int, int]:
    keys = ("input_tokens", "output_tokens", "total_tokens", "model_calls")
    return tuple(int(body[k]) for k in keys)  # type: ignore[return-value]


def views(api: httpx.Client, admin: str, person: User) -> list[tuple[int, int, int, int]]:
    """The person's sums as /api/usage/me (today), their conversation and the admin view show."""
    me = api.get("/api/usage/me", headers=bearer(person.token)).json()
    conversation = api.get(f"{CONV}/{person.cid}", headers=bearer(person.token)).json()
    items = api.get("/api/admin/usage", params={"group_by": "user"}, headers=bearer(admin))
    [mine] = [i for i in items.json()["items"] if i["user_id"] == person.id]
    return [sums(me["today"]), sums(conversation["usage"]), sums(mine)]


def expected(calls: int) -> tuple[int, int, int, int]:
    return (P * calls, C * calls, (P + C) * calls, calls)


def with_usage(*responses: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**r, "usage": USAGE} for r in responses]


DIAGNOSIS_ID = "call_usage_logs"
SCRIPTS: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
    "plain": ({}, with_usage({"text": "Plain answer."})),
    "tool": (
        {},
        with_usage(
            {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}]},
            {"text": "Dashboard 42 is the Sales overview."},
        ),
    ),
    "chat-only": ({"mode": "none"}, with_usage({"text": "No tools here."})),
    "workflow": ({"mode": "yaml", "workflow": "todays_errors"}, with_usage({"text": "Quiet."})),
    "diagnosis": (
        {"mode": "diagnose"},
        with_usage(
            {
                "tool_calls": [
                    {
                        "name": "query_logs",
                        "args": {"input": {"level": "error"}},
                        "id": DIAGNOSIS_ID,
                    }
                ]
            },
            answer(draft_of(DIAGNOSIS_ID)),
        ),
    ),
}


@pytest.mark.parametrize("kind", list(SCRIPTS))
def test_every_model_call_of_each_mode_is_counted_once_as_the_model_reported_it(
    kind, chat: Chat, api, tokens, user, fake_llm
):
    person = user()
    options, script = SCRIPTS[kind]
    fake_llm.enqueue(*script)

    outputs = chat.send(person.token, person.cid, "Show dashboard 42", options=options)

    assert error_code(outputs) is None, outputs[-1]
    calls = len(fake_llm.requests)
    assert calls == len(script)
    assert views(api, tokens["admin"], person) == [expected(calls)] * 3


def test_a_stopped_stream_adds_one_call_with_an_estimate(chat: Chat, api, tokens, user, fake_llm):
    person = user()
    fake_llm.enqueue({"tokens": 60, "delay_ms": 80, "usage": USAGE})
    job = chat.submit(person.token, person.cid, "Tell me a long story")
    wait_for(job, lambda m: len(text_of(m)) >= 9)
    job.cancel()
    deadline = time.monotonic() + 15
    while not (me := views(api, tokens["admin"], person))[0][3]:
        assert time.monotonic() < deadline, "the stopped call was never recorded"
        time.sleep(0.1)

    assert me[0] == me[1] == me[2]
    inp, out, total, calls = me[0]
    assert calls == 1 and inp > 0 and 0 < out < 60 and total == inp + out
    items = api.get(
        "/api/admin/usage", params={"group_by": "model"}, headers=bearer(tokens["admin"])
    )
    [row] = [i for i in items.json()["items"] if i["user_id"] == person.id]
    assert row["estimated_calls"] == 1


def test_over_budget_nothing_reaches_the_model_and_lifted_it_answers_again(
    chat: Chat, api, tokens, user, fake_llm
):
    person = user()
    fake_llm.enqueue(*with_usage({"text": "First answer."}))
    chat.send(person.token, person.cid, "hello")
    budget = f"/api/admin/users/{person.id}/budget"
    admin = bearer(tokens["admin"])
    assert api.put(budget, json={"daily_tokens": P + C}, headers=admin).status_code == 200
    fake_llm.reset()

    refused = chat.send(person.token, person.cid, "again")

    assert error_code(refused) == "USAGE_LIMIT"
    [error] = of_type(refused[-1], "error")
    assert "UTC" in error["metadata"]["message"] and fake_llm.requests == []
    none_mode = chat.send(person.token, person.cid, "again", options={"mode": "none"})
    assert error_code(none_mode) == "USAGE_LIMIT" and fake_llm.requests == []
    assert api.put(budget, json={"daily_tokens": None}, headers=admin).status_code == 200
    fake_llm.enqueue(*with_usage({"text": "Back again."}))
    assert text_of(chat.send(person.token, person.cid, "again")[-1]) == "Back again."
    assert views(api, tokens["admin"], person)[0] == expected(2)


def test_a_run_that_reaches_the_budget_between_two_calls_stops_there_with_its_partial_text(
    chat: Chat, api, tokens, user, fake_llm
):
    person = user()
    admin = bearer(tokens["admin"])
    path = f"/api/admin/users/{person.id}/budget"
    assert api.put(path, json={"daily_tokens": P + C}, headers=admin).status_code == 200
    tool = {"name": "get_dashboard", "args": {"dashboard_id": 42}}
    fake_llm.enqueue(*with_usage({"text": "Let me look.", "tool_calls": [tool]}, {"text": "No"}))

    outputs = chat.send(person.token, person.cid, "Show dashboard 42")

    assert error_code(outputs) == "USAGE_LIMIT"
    assert len(fake_llm.requests) == 1  # the second round never reached the model
    assert "Let me look." in text_of(outputs[-1])
    stored = history(api, person.token, person.cid)
    assert stored[-1]["role"] == "assistant" and "Let me look." in stored[-1]["content"]
    assert views(api, tokens["admin"], person) == [expected(1)] * 3


def test_an_evaluation_records_its_model_calls_marked_as_such_without_a_conversation(
    agent_env, fake_llm, sql, tmp_path
):
    marker = f"golf{uuid.uuid4().hex[:6]}:"
    fake_llm.add_rule(marker, {"text": "No tool needed.", "usage": USAGE})
    cases = write_cases(
        tmp_path / "one.jsonl",
        [{"query": f"{marker} say hello", "expected_tools": [], "lang": "en"}],
    )
    query = "select count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0)"
    before = sql.execute(f"{query} from usage_calls where evaluation").fetchone()

    result = run_eval(["--cases", str(cases)], agent_env)

    assert result.returncode == 0, result.stderr
    after = sql.execute(f"{query} from usage_calls where evaluation").fetchone()
    assert (after[0] - before[0], after[1] - before[1], after[2] - before[2]) == (1, P, C)
    row = sql.execute(
        "select conversation_id, source from usage_calls where evaluation order by id desc limit 1"
    ).fetchone()
    assert row == (None, "reported")
