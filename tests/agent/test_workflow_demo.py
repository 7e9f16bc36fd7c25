"""The shipped workflows offline, on an agent process with the built-in demo model (no LLM
configured): the `llm_call` steps say, labelled, what they were given, and the pre-deploy check's
verdict follows the validation status it was shown."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agent.support import Chat, text_of
from tests.agent.test_workflows import steps_of


@pytest.fixture(scope="module")
def offline(start_agent) -> Iterator[Chat]:
    with start_agent(LLM_API_BASE="") as (base, _proc):
        yield Chat(base)


def _llm_step(outputs: list) -> dict:
    (step,) = [s for s in steps_of(outputs[-1]) if s["step_type"] == "llm_call"]
    return step


@pytest.mark.parametrize(
    ("dashboard", "verdict"), [(42, "GO: validation status: ok"), (17, "NO-GO")]
)
def test_the_predeploy_check_says_go_only_for_a_dashboard_that_validates(
    offline, tokens, conversation, dashboard, verdict
):
    outputs = offline.send(
        tokens["viewer"],
        conversation("viewer"),
        f"Is dashboard {dashboard} ready to deploy?",
        options={"mode": "yaml", "workflow": "dashboard_predeploy_check"},
    )

    step = _llm_step(outputs)
    assert step["status"] == "completed"
    said = step["output"]["text"]
    assert said.startswith("[demo model] ") and verdict in said
    assert "I understand a few kinds of requests" not in text_of(outputs[-1])


def test_explore_table_offline_lists_what_the_step_was_given_in_russian(
    offline, tokens, conversation
):
    outputs = offline.send(
        tokens["viewer"],
        conversation("viewer"),
        "Опиши таблицу sample.orders",
        options={"mode": "yaml", "workflow": "explore_table"},
    )

    said = _llm_step(outputs)["output"]["text"]
    assert "вот что получил этот шаг" in said
    assert "Columns: " in said and "(id" in said  # the table's columns, counted and named
