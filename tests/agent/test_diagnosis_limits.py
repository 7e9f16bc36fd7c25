"""The token budget (from the usage the model reports) and the deadline of a diagnosis, on an
agent process of their own with small limits: both end the run as a controlled stop."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agent._diagnosis import answer, call, diagnose, diagnosis_of, draft_of, new_id
from tests.agent.support import Chat

QUESTION = "Why is dashboard 17 failing?"


@pytest.fixture(scope="module")
def limited(start_agent) -> Iterator[Chat]:
    # The system prompt alone is far over 300 tokens as the scripted model counts them, so
    # the first round's usage spends the token budget; the model may take 30 s, the run 3 s.
    env = {
        "DIAGNOSIS__MAX_TOKENS": "300",
        "DIAGNOSIS__DEADLINE_S": "3",
        "LLM__REQUEST_TIMEOUT_S": "30",
    }
    with start_agent(**env) as (base, _proc):
        yield Chat(base)


def test_the_reported_usage_spends_the_token_budget_and_the_next_round_is_not_called(
    limited, tokens, conversation, fake_llm
):
    logs = new_id("logs")
    fake_llm.enqueue(call("query_logs", {"dashboard_id": 17}, id=logs), answer(draft_of(logs)))

    outputs = diagnose(limited, tokens["viewer"], conversation("viewer"), QUESTION)

    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "stopped" and result["stop_reason"] == "BUDGET_EXHAUSTED"
    assert len(fake_llm.requests) == 1 and result["progress"]["tokens"] > 300
    assert [c["tool_call_id"] for c in result["progress"]["checked"]] == [logs]


def test_a_round_that_outlives_the_deadline_stops_the_run_with_deadline(
    limited, tokens, conversation, fake_llm
):
    fake_llm.enqueue({"hang_s": 20, "text": "late"})

    outputs = diagnose(limited, tokens["viewer"], conversation("viewer"), QUESTION)

    result = diagnosis_of(outputs[-1])
    assert result["outcome"] == "stopped" and result["stop_reason"] == "DEADLINE"
    assert len(fake_llm.requests) == 1
