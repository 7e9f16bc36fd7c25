"""Archiving a conversation while the agent streams an answer into it (raw HTTP against the real
backend and agent): refused with CONVERSATION_BUSY until the run ends, then the whole thread
goes, and no run starts on the archived conversation."""

from __future__ import annotations

from tests.agent.support import collect, error_code, text_of, wait_for
from tests.agent.test_cancel import active, wait_inactive
from tests.backend.support import assert_error, checkpoint_rows, scalar
from tests.conftest import bearer

NONE_LEFT = {"checkpoints": 0, "checkpoint_blobs": 0, "checkpoint_writes": 0}


def test_archive_is_refused_while_a_run_streams_and_clears_the_thread_once_it_ends(
    chat, tokens, conversation, fake_llm, api, sql
):
    cid = conversation()
    headers = bearer(tokens["admin"])
    fake_llm.enqueue({"tokens": 40, "delay_ms": 60})
    job = chat.submit(tokens["admin"], cid, "Tell me a long story")
    wait_for(job, lambda m: "t2" in text_of(m))
    assert active(api, tokens["admin"], cid)

    refused = api.delete(f"/api/assistant/conversations/{cid}", headers=headers)

    assert_error(refused, 409, "CONVERSATION_BUSY")
    state = api.get(f"/api/assistant/conversations/{cid}", headers=headers).json()
    assert state["is_archived"] is False
    # The run was not disturbed: it streams to its last token and is stored.
    outputs = collect(job)
    assert text_of(outputs[-1]).split()[-1] == "t39"
    wait_inactive(api, tokens["admin"], cid)
    assert checkpoint_rows(sql, cid)["checkpoints"] > 0

    archived = api.delete(f"/api/assistant/conversations/{cid}", headers=headers)

    assert archived.status_code == 204, archived.text
    assert checkpoint_rows(sql, cid) == NONE_LEFT
    sent = len(fake_llm.requests)
    assert error_code(chat.send(tokens["admin"], cid, "One more?")) == "CONVERSATION_ARCHIVED"
    assert len(fake_llm.requests) == sent
    assert checkpoint_rows(sql, cid) == NONE_LEFT
    runs = "SELECT count(*) FROM agent_runs WHERE conversation_id = %s"
    assert scalar(sql, runs, cid) == 0


def test_a_run_stalled_past_its_lease_learns_of_the_archive_and_leaves_no_checkpoint(
    chat, tokens, conversation, fake_llm, api, sql
):
    """The lease expired under a live run (as when its process stalls): the archive goes
    through, the run's next renewal is refused, and it deletes what it wrote since."""
    cid = conversation()
    headers = bearer(tokens["admin"])
    fake_llm.enqueue({"tokens": 200, "delay_ms": 50})
    job = chat.submit(tokens["admin"], cid, "Tell me a very long story")
    wait_for(job, lambda m: "t2" in text_of(m))
    sql.execute(
        "UPDATE agent_runs SET expires_at = now() - interval '1 second' WHERE conversation_id = %s",
        (cid,),
    )

    archived = api.delete(f"/api/assistant/conversations/{cid}", headers=headers)
    assert archived.status_code == 204, archived.text

    outputs = collect(job)
    assert error_code(outputs) == "CONVERSATION_ARCHIVED"
    assert "t199" not in text_of(outputs[-1])
    wait_inactive(api, tokens["admin"], cid)
    assert checkpoint_rows(sql, cid) == NONE_LEFT
