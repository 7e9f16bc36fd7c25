"""Start slots over the real processes (agent/admission.py): an agent with one slot still
serves every run of a burst, each to its end, and a start stuck on something else (a decision
waiting for a conversation another run holds) keeps the slot only `agent.start_hold_s`, not the
whole wait. The slot wait is on /metrics (agent_run_start_wait_seconds)."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.agent.support import Chat, collect, error_code, text_of
from tests.conftest import bearer

CONFIRM_WAIT_S = 6.0  # how long a decision waits for a held conversation before CONVERSATION_BUSY
ONE_SLOT = {
    "AGENT__START_SLOTS": "1",
    "AGENT__START_HOLD_S": "0.3",
    "AGENT__CONFIRM_WAIT_S": str(CONFIRM_WAIT_S),
}


@pytest.fixture(scope="module")
def one_slot(start_agent) -> Iterator[tuple[str, Chat]]:
    with start_agent(**ONE_SLOT) as (url, _proc):
        yield url, Chat(url)


def start_waits(url: str) -> int:
    body = httpx.get(url + "/metrics").text
    found = re.search(r"^agent_run_start_wait_seconds_count (\S+)$", body, re.M)
    return int(float(found.group(1))) if found else 0


def test_a_burst_through_one_slot_is_answered_whole_run_by_run(
    one_slot, tokens, conversation, fake_llm, api
):
    url, _chat = one_slot
    before = start_waits(url)
    cids = [conversation() for _ in range(4)]
    for _ in cids:
        fake_llm.enqueue({"text": "One answer for each.", "delay_ms": 30})
    results: dict[str, str] = {}

    def ask(cid: str) -> None:
        results[cid] = text_of(Chat(url).send(tokens["admin"], cid, "Hello")[-1])

    threads = [threading.Thread(target=ask, args=(cid,)) for cid in cids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert results == {cid: "One answer for each." for cid in cids}
    for cid in cids:
        rows = api.get(
            f"/api/assistant/conversations/{cid}/history", headers=bearer(tokens["admin"])
        ).json()["items"]
        assert [r["role"] for r in rows] == ["user", "assistant"]
    assert start_waits(url) - before == 4  # every run went through a slot


def test_a_start_stuck_on_a_held_conversation_holds_up_no_other_run(
    one_slot, tokens, conversation, fake_llm, api, as_agent
):
    _url, chat = one_slot
    held, free = conversation("editor"), conversation("admin")
    # another run holds `held`: its lease taken straight from the backend
    taken = api.put(
        f"/api/agent/conversations/{held}/lease",
        json={"holder": uuid.uuid4().hex, "ttl_s": 30},
        headers=as_agent["editor"],
    )
    assert taken.status_code == 200, taken.text
    # a decision waits up to CONFIRM_WAIT_S for the conversation, in the only start slot
    stuck = chat.submit(tokens["editor"], held, action="confirm")
    time.sleep(0.5)
    fake_llm.enqueue({"text": "Not held up."})

    began = time.monotonic()
    outputs = chat.send(tokens["admin"], free, "Hello")
    took = time.monotonic() - began

    assert text_of(outputs[-1]) == "Not held up."
    assert took < CONFIRM_WAIT_S - 2, f"waited {took:.1f} s behind the stuck start"
    assert error_code(collect(stuck)) == "CONVERSATION_BUSY"
