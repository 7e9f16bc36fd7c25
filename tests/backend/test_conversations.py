"""Conversations over HTTP: create, list, get, history, archive (with checkpoints), restore,
auto-title, message appends and the agent's run lease."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.backend.support import (
    NewUser,
    Person,
    append,
    assert_error,
    audit_rows,
    checkpoint_rows,
    create_conversation,
    put_checkpoint,
    scalar,
)

BASE = "/api/assistant/conversations"


def lease_path(cid: str) -> str:
    return f"/api/agent/conversations/{cid}/lease"


def active(api, headers, cid: str) -> bool:
    response = api.get(f"/api/agent/conversations/{cid}/active", headers=headers)
    assert response.status_code == 200, response.text
    return bool(response.json()["active"])


@pytest.fixture()
def person(new_user: NewUser) -> Person:
    """A fresh user, for tests that assert on the whole of a user's lists."""
    return new_user("viewer", prefix="conv")


@pytest.fixture(scope="module")
def shared(new_user: NewUser) -> Person:
    """One user for the tests that only look at their own conversation."""
    return new_user("viewer", prefix="conv")


def test_create_returns_the_contract_shape_and_stores_the_row(api, sql, shared):
    created = create_conversation(api, shared.headers, "  Quarterly numbers  ")
    assert set(created) == {
        "id",
        "title",
        "created_at",
        "updated_at",
        "message_count",
        "is_archived",
    }
    assert created["title"] == "Quarterly numbers"
    assert (created["message_count"], created["is_archived"]) == (0, False)
    uuid.UUID(created["id"])
    owner = scalar(sql, "SELECT owner_id FROM agent_conversations WHERE id = %s", created["id"])
    assert str(owner) == shared.id
    detail = api.get(f"{BASE}/{created['id']}", headers=shared.headers).json()
    zero = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0, "model_calls": 0}
    assert detail.pop("usage") == zero  # the detail adds the conversation's usage
    assert detail == created


def test_list_is_own_newest_activity_first_with_total_and_pagination(api, person, new_user):
    other = new_user()
    create_conversation(api, other.headers, "not mine")
    ids = [create_conversation(api, person.headers, f"c{i}")["id"] for i in range(5)]
    page = api.get(BASE, headers=person.headers).json()
    assert page["total"] == 5
    assert [c["id"] for c in page["items"]] == ids[::-1]
    # Activity on the oldest moves it to the top.
    append(api, person.agent, ids[0], "bump")
    order = [c["id"] for c in api.get(BASE, headers=person.headers).json()["items"]]
    assert order == [ids[0], ids[4], ids[3], ids[2], ids[1]]
    first = api.get(BASE, params={"limit": 2}, headers=person.headers).json()
    second = api.get(BASE, params={"limit": 2, "offset": 2}, headers=person.headers).json()
    last = api.get(BASE, params={"limit": 2, "offset": 4}, headers=person.headers).json()
    assert [c["id"] for c in first["items"] + second["items"] + last["items"]] == order
    assert (first["total"], second["total"], len(last["items"])) == (5, 5, 1)
    past_the_end = api.get(BASE, params={"offset": 50}, headers=person.headers).json()
    assert past_the_end == {"items": [], "total": 5}


def test_a_huge_limit_is_capped_at_the_server_maximum(api, sql, person):
    # 201 conversations straight into the database: one more than the cap of 200.
    sql.execute(
        "INSERT INTO agent_conversations (id, owner_id, title, message_count, is_archived,"
        " created_at, updated_at) SELECT gen_random_uuid(), %s, 'bulk', 0, false, now(), now()"
        " FROM generate_series(1, 201)",
        (person.id,),
    )
    for limit in (10**9, 10**30, 201):
        page = api.get(BASE, params={"limit": limit}, headers=person.headers).json()
        assert (len(page["items"]), page["total"]) == (200, 201)
    conversation = create_conversation(api, person.headers)
    sql.execute(
        "INSERT INTO agent_messages (conversation_id, role, content, metadata, created_at)"
        " SELECT %s, 'user', 'm' || g, '{}', now() FROM generate_series(1, 205) g",
        (conversation["id"],),
    )
    history = api.get(
        f"{BASE}/{conversation['id']}/history", params={"limit": 10**9}, headers=person.headers
    ).json()
    assert len(history["items"]) == 200 and history["has_more"] is True
    assert history["items"][-1]["content"] == "m205"


@pytest.mark.parametrize("limit", ["0", "-1", "ten", "1.5"])
def test_a_nonsense_limit_is_422(api, shared, limit):
    response = api.get(BASE, params={"limit": limit}, headers=shared.headers)
    assert_error(response, 422, "INVALID_INPUT")


def test_history_pages_backwards_oldest_first_with_has_more(api, shared):
    cid = create_conversation(api, shared.headers)["id"]
    sent = [append(api, shared.agent, cid, f"m{i}")["id"] for i in range(7)]
    url = f"{BASE}/{cid}/history"
    latest = api.get(url, params={"limit": 3}, headers=shared.headers).json()
    assert [m["id"] for m in latest["items"]] == sent[4:]
    assert latest["has_more"] is True
    before = latest["items"][0]["id"]
    middle = api.get(url, params={"limit": 3, "before": before}, headers=shared.headers).json()
    assert [m["id"] for m in middle["items"]] == sent[1:4] and middle["has_more"] is True
    before = middle["items"][0]["id"]
    oldest = api.get(url, params={"limit": 3, "before": before}, headers=shared.headers).json()
    assert [m["content"] for m in oldest["items"]] == ["m0"] and oldest["has_more"] is False
    everything = api.get(url, headers=shared.headers).json()
    assert [m["id"] for m in everything["items"]] == sent and everything["has_more"] is False


def test_messages_keep_role_content_and_metadata_and_count(api, sql, shared):
    cid = create_conversation(api, shared.headers)["id"]
    meta = {"type": "tool_end", "tool": "get_dashboard", "nested": {"n": [1, 2]}}
    append(api, shared.agent, cid, "hello")
    stored = append(api, shared.agent, cid, "answer", role="assistant", metadata=meta)
    assert set(stored) == {"id", "role", "content", "metadata", "created_at"}
    items = api.get(f"{BASE}/{cid}/history", headers=shared.headers).json()["items"]
    assert [(m["role"], m["content"], m["metadata"]) for m in items] == [
        ("user", "hello", {}),
        ("assistant", "answer", meta),
    ]
    assert api.get(f"{BASE}/{cid}", headers=shared.headers).json()["message_count"] == 2
    assert scalar(sql, "SELECT message_count FROM agent_conversations WHERE id = %s", cid) == 2


def test_the_first_user_message_titles_an_untitled_conversation_cut_to_60_chars(api, shared):
    cid = create_conversation(api, shared.headers)["id"]
    assert api.get(f"{BASE}/{cid}", headers=shared.headers).json()["title"] == ""
    append(api, shared.agent, cid, "I am the assistant speaking first", role="assistant")
    assert api.get(f"{BASE}/{cid}", headers=shared.headers).json()["title"] == ""
    long = "Why is dashboard 42 failing   since\nthe last deploy of the revenue model, and who"
    append(api, shared.agent, cid, long)
    append(api, shared.agent, cid, "a second user message does not rename it")
    title = api.get(f"{BASE}/{cid}", headers=shared.headers).json()["title"]
    assert title == " ".join(long.split())[:60]
    assert len(title) == 60 and title.startswith("Why is dashboard 42 failing since the last")


def test_an_explicit_title_is_not_overwritten_and_patch_renames(api, sql, shared):
    cid = create_conversation(api, shared.headers, "Mine")["id"]
    append(api, shared.agent, cid, "first question")
    assert api.get(f"{BASE}/{cid}", headers=shared.headers).json()["title"] == "Mine"
    renamed = api.patch(f"{BASE}/{cid}", json={"title": "Renamed"}, headers=shared.headers)
    assert renamed.json()["title"] == "Renamed"
    assert scalar(sql, "SELECT title FROM agent_conversations WHERE id = %s", cid) == "Renamed"


def test_archive_is_204_moves_lists_and_clears_only_that_threads_checkpoints(
    api, sql, person, checkpointer
):
    doomed = create_conversation(api, person.headers, "doomed")["id"]
    kept = create_conversation(api, person.headers, "kept")["id"]
    for cid in (doomed, kept):
        put_checkpoint(checkpointer, cid)
        assert all(n >= 1 for n in checkpoint_rows(sql, cid).values()), checkpoint_rows(sql, cid)
    kept_before = checkpoint_rows(sql, kept)

    response = api.delete(f"{BASE}/{doomed}", headers=person.headers)
    assert response.status_code == 204 and response.content == b""

    assert checkpoint_rows(sql, doomed) == {
        "checkpoints": 0,
        "checkpoint_blobs": 0,
        "checkpoint_writes": 0,
    }
    assert checkpoint_rows(sql, kept) == kept_before
    config = {"configurable": {"thread_id": doomed, "checkpoint_ns": ""}}
    assert checkpointer.get_tuple(config) is None  # type: ignore[arg-type]
    assert api.get(f"{BASE}/{doomed}", headers=person.headers).json()["is_archived"] is True
    live = api.get(BASE, headers=person.headers).json()
    archived = api.get(BASE, params={"archived": "true"}, headers=person.headers).json()
    assert [c["id"] for c in live["items"]] == [kept]
    assert [c["id"] for c in archived["items"]] == [doomed] and archived["total"] == 1
    [row] = audit_rows(sql, action="conversation.archive", resource_id=doomed)
    assert row["outcome"] == "success"
    assert row["details"] == {"thread_deleted": True, "had_checkpoints": True}


def test_archiving_a_conversation_without_checkpoints_says_so_in_the_audit_row(
    api, sql, person, checkpointer
):
    cid = create_conversation(api, person.headers)["id"]
    assert api.delete(f"{BASE}/{cid}", headers=person.headers).status_code == 204
    [row] = audit_rows(sql, action="conversation.archive", resource_id=cid)
    assert row["details"] == {"thread_deleted": True, "had_checkpoints": False}


def test_restore_brings_an_archived_conversation_back(api, sql, person):
    cid = create_conversation(api, person.headers, "back")["id"]
    assert api.delete(f"{BASE}/{cid}", headers=person.headers).status_code == 204
    restored = api.post(f"{BASE}/{cid}/restore", headers=person.headers)
    assert restored.status_code == 200 and restored.json()["is_archived"] is False
    assert [c["id"] for c in api.get(BASE, headers=person.headers).json()["items"]] == [cid]
    assert scalar(sql, "SELECT is_archived FROM agent_conversations WHERE id = %s", cid) is False


def test_appending_to_an_archived_conversation_is_409_and_writes_nothing(api, sql, shared):
    cid = create_conversation(api, shared.headers)["id"]
    append(api, shared.agent, cid, "before archive")
    api.delete(f"{BASE}/{cid}", headers=shared.headers)
    response = api.post(
        f"{BASE}/{cid}/messages", json={"role": "user", "content": "late"}, headers=shared.agent
    )
    assert_error(response, 409, "CONVERSATION_ARCHIVED")
    assert scalar(sql, "SELECT count(*) FROM agent_messages WHERE conversation_id = %s", cid) == 1
    assert scalar(sql, "SELECT message_count FROM agent_conversations WHERE id = %s", cid) == 1


def test_a_plain_user_token_cannot_append_messages(api, sql, shared):
    cid = create_conversation(api, shared.headers)["id"]
    response = api.post(
        f"{BASE}/{cid}/messages", json={"role": "user", "content": "x"}, headers=shared.headers
    )
    assert_error(response, 403, "FORBIDDEN")
    assert scalar(sql, "SELECT count(*) FROM agent_messages WHERE conversation_id = %s", cid) == 0


# --- the agent's run lease -------------------------------------------------------------------


def test_a_lease_marks_the_conversation_active_until_released(api, sql, shared):
    cid = create_conversation(api, shared.headers)["id"]
    assert active(api, shared.headers, cid) is False
    taken = api.put(lease_path(cid), json={"holder": "run-a", "ttl_s": 30}, headers=shared.agent)
    assert taken.status_code == 200, taken.text
    assert taken.json()["holder"] == "run-a" and taken.json()["conversation_id"] == cid
    assert active(api, shared.headers, cid) is True
    assert active(api, shared.agent, cid) is True
    released = api.delete(lease_path(cid), params={"holder": "run-a"}, headers=shared.agent)
    assert released.status_code == 204
    assert active(api, shared.headers, cid) is False
    assert scalar(sql, "SELECT count(*) FROM agent_runs WHERE conversation_id = %s", cid) == 0


def test_the_lease_answer_says_whether_the_thread_has_history_and_a_waiting_workflow(
    api, sql, shared
):
    """The run skips its history read and its workflow cancel on what the answer says."""

    def thread(holder: str) -> dict[str, bool]:
        taken = api.put(lease_path(cid), json={"holder": holder}, headers=shared.agent)
        assert taken.status_code == 200, taken.text
        api.delete(lease_path(cid), params={"holder": holder}, headers=shared.agent)
        return dict(taken.json()["thread"])

    cid = create_conversation(api, shared.headers)["id"]
    assert thread("new") == {"has_history": False, "workflow_waiting": False}
    append(api, shared.agent, cid, "How is dashboard 42?")
    assert thread("asked") == {"has_history": True, "workflow_waiting": False}
    sql.execute(
        "INSERT INTO workflow_executions"
        " (conversation_id, mode, workflow_name, status, input, started_at)"
        " VALUES (%s, 'yaml', 'check', 'waiting', '{}', now())",
        (cid,),
    )
    assert thread("waiting") == {"has_history": True, "workflow_waiting": True}
    sql.execute(
        "UPDATE workflow_executions SET status = 'cancelled' WHERE conversation_id = %s", (cid,)
    )
    assert thread("cancelled") == {"has_history": True, "workflow_waiting": False}


def test_a_second_holder_is_busy_while_the_first_renews(api, sql, shared):
    cid = create_conversation(api, shared.headers)["id"]
    first = api.put(lease_path(cid), json={"holder": "run-a", "ttl_s": 30}, headers=shared.agent)
    busy = api.put(lease_path(cid), json={"holder": "run-b"}, headers=shared.agent)
    assert_error(busy, 409, "CONVERSATION_BUSY")
    holder = "SELECT holder FROM agent_runs WHERE conversation_id = %s"
    assert scalar(sql, holder, cid) == "run-a"
    renewed = api.put(lease_path(cid), json={"holder": "run-a", "ttl_s": 60}, headers=shared.agent)
    assert renewed.status_code == 200
    assert renewed.json()["expires_at"] > first.json()["expires_at"]
    # Releasing with the wrong holder leaves the lease in place.
    api.delete(lease_path(cid), params={"holder": "run-b"}, headers=shared.agent)
    assert scalar(sql, holder, cid) == "run-a" and active(api, shared.headers, cid) is True


def test_an_expired_lease_is_inactive_and_can_be_taken_by_another_holder(api, sql, shared):
    cid = create_conversation(api, shared.headers)["id"]
    api.put(lease_path(cid), json={"holder": "crashed"}, headers=shared.agent)
    sql.execute(
        "UPDATE agent_runs SET expires_at = now() - interval '1 second' WHERE conversation_id = %s",
        (cid,),
    )
    assert active(api, shared.headers, cid) is False
    taken = api.put(lease_path(cid), json={"holder": "fresh"}, headers=shared.agent)
    assert taken.status_code == 200 and taken.json()["holder"] == "fresh"
    assert active(api, shared.headers, cid) is True
    acquired = audit_rows(sql, action="conversation.lease_acquire", resource_id=cid)
    assert [row["details"]["holder"] for row in acquired] == ["crashed", "fresh"]


def test_an_archived_conversation_gives_no_lease(api, sql, shared):
    cid = create_conversation(api, shared.headers)["id"]
    assert api.delete(f"{BASE}/{cid}", headers=shared.headers).status_code == 204
    refused = api.put(lease_path(cid), json={"holder": "run-b"}, headers=shared.agent)
    assert_error(refused, 409, "CONVERSATION_ARCHIVED")
    assert scalar(sql, "SELECT count(*) FROM agent_runs WHERE conversation_id = %s", cid) == 0
    assert active(api, shared.headers, cid) is False


def test_archive_while_a_run_holds_the_lease_is_409_busy_and_changes_nothing(
    api, sql, shared, checkpointer
):
    cid = create_conversation(api, shared.headers)["id"]
    put_checkpoint(checkpointer, cid)
    before = checkpoint_rows(sql, cid)
    taken = api.put(lease_path(cid), json={"holder": "run-a", "ttl_s": 30}, headers=shared.agent)
    assert taken.status_code == 200, taken.text

    refused = api.delete(f"{BASE}/{cid}", headers=shared.headers)

    assert_error(refused, 409, "CONVERSATION_BUSY")
    assert scalar(sql, "SELECT is_archived FROM agent_conversations WHERE id = %s", cid) is False
    assert checkpoint_rows(sql, cid) == before
    [row] = audit_rows(sql, action="conversation.archive", resource_id=cid)
    assert (row["outcome"], row["details"]) == ("failure", {"reason": "CONVERSATION_BUSY"})
    # The run goes on renewing; once it lets go, the archive goes through.
    renewed = api.put(lease_path(cid), json={"holder": "run-a"}, headers=shared.agent)
    assert renewed.status_code == 200
    api.delete(lease_path(cid), params={"holder": "run-a"}, headers=shared.agent)
    assert api.delete(f"{BASE}/{cid}", headers=shared.headers).status_code == 204
    assert sum(checkpoint_rows(sql, cid).values()) == 0


def test_an_expired_lease_does_not_block_the_archive(api, sql, shared):
    cid = create_conversation(api, shared.headers)["id"]
    api.put(lease_path(cid), json={"holder": "crashed"}, headers=shared.agent)
    sql.execute(
        "UPDATE agent_runs SET expires_at = now() - interval '1 second' WHERE conversation_id = %s",
        (cid,),
    )
    assert api.delete(f"{BASE}/{cid}", headers=shared.headers).status_code == 204
    renewal = api.put(lease_path(cid), json={"holder": "crashed"}, headers=shared.agent)
    assert_error(renewal, 409, "CONVERSATION_ARCHIVED")


def test_archive_and_lease_racing_never_both_win(api, sql, shared, backend_url):
    """Sent at the same moment, over and over: either the run got the lease and the archive was
    refused, or the archive won and the lease was refused; never an archived conversation with
    a run on it."""
    with (
        httpx.Client(base_url=backend_url, timeout=30) as one,
        httpx.Client(base_url=backend_url, timeout=30) as other,
        ThreadPoolExecutor(2) as pool,
    ):
        for _ in range(12):
            cid = create_conversation(api, shared.headers)["id"]
            gate = threading.Barrier(2)

            def lease(cid: str = cid, gate: threading.Barrier = gate) -> int:
                gate.wait()
                body = {"holder": "racer", "ttl_s": 30}
                return one.put(lease_path(cid), json=body, headers=shared.agent).status_code

            def archive(cid: str = cid, gate: threading.Barrier = gate) -> int:
                gate.wait()
                return other.delete(f"{BASE}/{cid}", headers=shared.headers).status_code

            leased, archived = pool.submit(lease), pool.submit(archive)
            pair = (leased.result(), archived.result())
            assert pair in {(200, 409), (409, 204)}, pair
            is_archived = scalar(
                sql, "SELECT is_archived FROM agent_conversations WHERE id = %s", cid
            )
            runs = scalar(sql, "SELECT count(*) FROM agent_runs WHERE conversation_id = %s", cid)
            assert (is_archived, runs) == ((False, 1) if pair[0] == 200 else (True, 0))


def test_heartbeat_renewals_are_not_audited_but_the_first_acquisition_is(api, sql, shared):
    cid = create_conversation(api, shared.headers)["id"]
    for _ in range(3):
        renewed = api.put(lease_path(cid), json={"holder": "run-a"}, headers=shared.agent)
        assert renewed.status_code == 200
    acquired = audit_rows(sql, action="conversation.lease_acquire", resource_id=cid)
    assert len(acquired) == 1 and acquired[0]["details"]["holder"] == "run-a"


@pytest.mark.parametrize(
    "body",
    [{}, {"holder": ""}, {"holder": "h", "ttl_s": 0}, {"holder": "h", "ttl_s": 301}, {"holder": 5}],
)
def test_a_bad_lease_request_is_422_and_takes_nothing(api, sql, shared, body):
    cid = create_conversation(api, shared.headers)["id"]
    assert_error(api.put(lease_path(cid), json=body, headers=shared.agent), 422, "INVALID_INPUT")
    assert scalar(sql, "SELECT count(*) FROM agent_runs WHERE conversation_id = %s", cid) == 0
