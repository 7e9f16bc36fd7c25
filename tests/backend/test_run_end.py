"""A run's end in one request (`POST /api/agent/conversations/{id}/end`) over raw HTTP: the
history row, its debug record, the usage and the release land as their own routes would land
them (rows, audit rows, sums); a resend stores nothing twice; a refused part costs none of the
others; someone else's conversation is 404 and nothing of it changes."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.backend.debug.test_records import call as debug_call
from tests.backend.support import NewUser, Person, assert_error, audit_rows, scalar
from tests.backend.test_idempotency import unanswered_key
from tests.backend.test_usage import call as usage_call

CONV = "/api/assistant/conversations"


def end_path(cid: str) -> str:
    return f"/api/agent/conversations/{cid}/end"


def lease_path(cid: str) -> str:
    return f"/api/agent/conversations/{cid}/lease"


@pytest.fixture(scope="module")
def owner(new_user: NewUser) -> Person:
    return new_user("viewer", prefix="end")


def leased(api, person: Person, holder: str = "run-a") -> str:
    created = api.post(CONV, json={}, headers=person.headers)
    assert created.status_code == 201, created.text
    cid = str(created.json()["id"])
    taken = api.put(lease_path(cid), json={"holder": holder, "ttl_s": 30}, headers=person.agent)
    assert taken.status_code == 200, taken.text
    return cid


def ending(cid: str, *, key: str | None = None, **parts: object) -> dict[str, object]:
    body: dict[str, object] = {
        "holder": "run-a",
        "message": {"role": "assistant", "content": "Revenue is fine.", "metadata": {"n": 1}},
        "debug": {"calls": [debug_call("how is revenue?")]},
        "usage": [usage_call(cid, key or uuid.uuid4().hex, 120, 30)],
    }
    body.update(parts)
    return body


def counts(sql, cid: str) -> dict[str, int]:
    return {
        "messages": scalar(
            sql, "SELECT count(*) FROM agent_messages WHERE conversation_id = %s", cid
        ),
        "debug": scalar(
            sql,
            "SELECT count(*) FROM debug_records d JOIN agent_messages m"
            " ON m.id = d.message_id WHERE m.conversation_id = %s",
            cid,
        ),
        "usage": scalar(sql, "SELECT count(*) FROM usage_calls WHERE conversation_id = %s", cid),
        "leases": scalar(sql, "SELECT count(*) FROM agent_runs WHERE conversation_id = %s", cid),
    }


def test_one_request_stores_the_row_its_record_the_usage_and_releases(api, sql, owner):
    cid = leased(api, owner)
    ended = api.post(end_path(cid), json=ending(cid), headers=owner.agent)
    assert ended.status_code == 200, ended.text
    body = ended.json()
    assert body["errors"] == {} and body["released"] is True and body["recorded"] == 1
    assert counts(sql, cid) == {"messages": 1, "debug": 1, "usage": 1, "leases": 0}
    # what the browser reads: the row in the history, its debug record under its id
    history = api.get(f"{CONV}/{cid}/history", headers=owner.headers).json()["items"]
    assert [(m["id"], m["role"], m["content"]) for m in history] == [
        (body["message_id"], "assistant", "Revenue is fine.")
    ]
    record = api.get(f"/api/debug/{body['message_id']}", headers=owner.headers).json()
    assert record["calls"][0]["request"]["messages"][1]["content"] == "how is revenue?"
    # audited as the separate routes audit
    appended = audit_rows(sql, action="conversation.message_append", resource_id=cid)
    assert [r["details"]["message_id"] for r in appended] == [body["message_id"]]
    released = audit_rows(sql, action="conversation.lease_release", resource_id=cid)
    assert [r["details"] for r in released] == [{"holder": "run-a", "released": True}]
    active = api.get(f"/api/agent/conversations/{cid}/active", headers=owner.headers).json()
    assert active == {"active": False}


def test_sent_again_with_its_key_nothing_is_stored_twice(api, sql, owner):
    cid = leased(api, owner)
    body = ending(cid, key="call-1")
    headers = {**owner.agent, "Idempotency-Key": "end-1"}
    first = api.post(end_path(cid), json=body, headers=headers).json()
    sent_again = api.post(end_path(cid), json=body, headers=headers)
    # answered as the first time (backend/idempotency), and nothing is stored again
    assert sent_again.headers["Idempotent-Replayed"] == "true"
    again = sent_again.json()
    assert again == first
    assert (first["recorded"], first["released"]) == (1, True)
    assert counts(sql, cid) == {"messages": 1, "debug": 1, "usage": 1, "leases": 0}
    assert scalar(sql, "SELECT message_count FROM agent_conversations WHERE id = %s", cid) == 1


def test_a_key_left_without_its_answer_does_not_refuse_the_resend(api, sql, owner):
    """Postgres lost between the parts: the key, committed with the history row, keeps no
    answer (nor could its failed write's key be deleted). The agent's resend is done again,
    each part stored once by its own key, where any other route would be 409 for 24 hours."""
    cid = leased(api, owner)
    body = ending(cid, key="call-2")
    headers = {**owner.agent, "Idempotency-Key": "end-2"}
    assert api.post(end_path(cid), json=body, headers=headers).status_code == 200
    sql.execute(
        "UPDATE idempotency_keys SET status_code = NULL, content_type = NULL, body = NULL "
        "WHERE user_id = %s AND key = 'end-2'",
        (owner.id,),
    )
    sql.commit()
    sent_again = api.post(end_path(cid), json=body, headers=headers, timeout=30)
    assert sent_again.status_code == 200, sent_again.text
    assert "Idempotent-Replayed" not in sent_again.headers
    assert sent_again.json()["errors"] == {}
    assert counts(sql, cid) == {"messages": 1, "debug": 1, "usage": 1, "leases": 0}
    kept = "SELECT status_code FROM idempotency_keys WHERE user_id = %s AND key = 'end-2'"
    assert scalar(sql, kept, owner.id) == 200  # and its answer is kept now


def test_a_bad_debug_record_costs_neither_the_answer_nor_the_release(api, sql, owner):
    cid = leased(api, owner)
    bad = {"calls": [{"request": "not a request"}]}
    ended = api.post(end_path(cid), json=ending(cid, debug=bad), headers=owner.agent)
    assert ended.status_code == 200, ended.text
    body = ended.json()
    assert body["errors"]["debug"]["code"] == "INVALID_INPUT"
    assert set(body["errors"]) == {"debug"} and body["message_id"] is not None
    assert counts(sql, cid) == {"messages": 1, "debug": 0, "usage": 1, "leases": 0}


def test_an_answer_to_an_archived_conversation_is_refused_and_the_rest_still_lands(api, sql, owner):
    cid = leased(api, owner)
    # the archive cannot go through under a live lease: the run stalled past it, then renewed
    sql.execute(
        "UPDATE agent_runs SET expires_at = now() - interval '1 second' WHERE conversation_id = %s",
        (cid,),
    )
    assert api.delete(f"{CONV}/{cid}", headers=owner.headers).status_code == 204
    ended = api.post(end_path(cid), json=ending(cid), headers=owner.agent)
    assert ended.status_code == 200, ended.text
    body = ended.json()
    assert body["errors"]["message"]["code"] == "CONVERSATION_ARCHIVED"
    assert body["errors"]["debug"]["code"] == "NO_MESSAGE"
    assert body["message_id"] is None and body["recorded"] == 1
    assert counts(sql, cid)["messages"] == 0 and counts(sql, cid)["usage"] == 1


def test_another_holders_lease_is_left_in_place(api, sql, owner):
    cid = leased(api, owner, holder="run-b")
    ended = api.post(
        end_path(cid), json={"holder": "run-a", "message": None, "usage": []}, headers=owner.agent
    )
    assert ended.status_code == 200, ended.text
    assert ended.json() == {"message_id": None, "released": False, "recorded": 0, "errors": {}}
    assert counts(sql, cid)["leases"] == 1


def test_someone_elses_conversation_is_404_and_nothing_of_it_changes(
    api, sql, owner, new_user: NewUser
):
    cid = leased(api, owner)
    intruder = new_user("admin", prefix="end")
    refused = api.post(end_path(cid), json=ending(cid), headers=intruder.agent)
    assert_error(refused, 404, "NOT_FOUND")
    unknown = api.post(end_path(str(uuid.uuid4())), json=ending(cid), headers=owner.agent)
    assert_error(unknown, 404, "NOT_FOUND")
    assert counts(sql, cid) == {"messages": 0, "debug": 0, "usage": 0, "leases": 1}


def test_a_user_token_alone_cannot_end_a_run(api, sql, owner):
    cid = leased(api, owner)
    assert_error(api.post(end_path(cid), json=ending(cid), headers=owner.headers), 403, "FORBIDDEN")
    assert counts(sql, cid)["leases"] == 1


@pytest.mark.parametrize("body", [{"holder": ""}, {"usage": "x"}, {"message": "text"}, []])
def test_a_malformed_end_is_422_and_stores_nothing(api, sql, owner, body):
    cid = leased(api, owner)
    assert_error(api.post(end_path(cid), json=body, headers=owner.agent), 422, "INVALID_INPUT")
    assert counts(sql, cid) == {"messages": 0, "debug": 0, "usage": 0, "leases": 1}


def test_an_oversize_answer_and_record_are_refused_and_the_usage_and_release_still_land(
    api, sql, owner
):
    cid = leased(api, owner)
    huge = {"role": "assistant", "content": "x" * 200_001, "metadata": {}}
    big_record = {"calls": [debug_call("y" * 2_100_000)]}
    ended = api.post(end_path(cid), json=ending(cid, message=huge), headers=owner.agent)
    assert ended.status_code == 200, ended.text
    assert ended.json()["errors"]["message"]["code"] == "INVALID_INPUT"
    assert counts(sql, cid) == {"messages": 0, "debug": 0, "usage": 1, "leases": 0}

    cid = leased(api, owner)
    ended = api.post(end_path(cid), json=ending(cid, debug=big_record), headers=owner.agent)
    body = ended.json()
    assert set(body["errors"]) == {"debug"} and body["errors"]["debug"]["code"] == "INVALID_INPUT"
    assert counts(sql, cid) == {"messages": 1, "debug": 0, "usage": 1, "leases": 0}


def test_usage_naming_someone_elses_conversation_is_refused_and_counts_nothing(
    api, sql, owner, new_user: NewUser
):
    other = new_user("viewer", prefix="end")
    theirs = api.post(CONV, json={}, headers=other.headers).json()["id"]
    cid = leased(api, owner)
    smuggled = [usage_call(theirs, uuid.uuid4().hex, 500, 500)]
    ended = api.post(end_path(cid), json=ending(cid, usage=smuggled), headers=owner.agent)
    assert ended.status_code == 200, ended.text
    assert ended.json()["errors"]["usage"]["code"] == "NOT_FOUND"
    assert scalar(sql, "SELECT count(*) FROM usage_calls WHERE conversation_id = %s", theirs) == 0
    assert counts(sql, cid) == {"messages": 1, "debug": 1, "usage": 0, "leases": 0}


def test_a_forged_or_missing_token_is_401_and_nothing_changes(api, sql, owner):
    cid = leased(api, owner)
    forged = {**owner.agent, "X-On-Behalf-Of": owner.agent["X-On-Behalf-Of"][:-4] + "AAAA"}
    for headers in (forged, {}):
        refused = api.post(end_path(cid), json=ending(cid), headers=headers)
        assert refused.status_code == 401, refused.text
    assert counts(sql, cid) == {"messages": 0, "debug": 0, "usage": 0, "leases": 1}


def test_a_run_end_whose_first_request_never_answered_is_done_again_once(api, sql, owner):
    """Its parts are stored once by keys of their own, so a resend whose first request lost its
    database after committing a part is done again (each stored part skipped), never a 409 that
    would lose the rest for good."""
    cid = leased(api, owner)
    key = uuid.uuid4().hex
    body = json.dumps(ending(cid, key=key)).encode()
    unanswered_key(sql, owner, key, "POST", end_path(cid), body)
    headers = {**owner.agent, "Idempotency-Key": key, "Content-Type": "application/json"}
    again = api.post(end_path(cid), content=body, headers=headers)
    assert again.status_code == 200, again.text
    assert again.json()["errors"] == {} and again.json()["released"] is True
    assert counts(sql, cid) == {"messages": 1, "debug": 1, "usage": 1, "leases": 0}
    # and now it has its answer: a third send is that answer, storing nothing more
    third = api.post(end_path(cid), content=body, headers=headers)
    assert third.json() == again.json() and third.headers["Idempotent-Replayed"] == "true"
    assert counts(sql, cid) == {"messages": 1, "debug": 1, "usage": 1, "leases": 0}
