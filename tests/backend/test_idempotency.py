"""`Idempotency-Key` on the write routes, over raw HTTP (backend/idempotency): a write sent
again with the same key by the same user is done once and answered as the first time; the key
reused with another body is 422; another user's same key is theirs; no key, no memory; a key
over 64 characters is 422; duplicates sent at once still do the write once."""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.backend.support import NewUser, Person, assert_error, scalar

BASE = "/api/assistant/conversations"


@pytest.fixture()
def person(new_user: NewUser) -> Person:
    return new_user("viewer", prefix="idem")


def _create(api: httpx.Client, person: Person, key: str | None, title: str) -> httpx.Response:
    headers = {**person.headers, **({"Idempotency-Key": key} if key else {})}
    return api.post(BASE, json={"title": title}, headers=headers)


def _count(sql, person: Person, title: str) -> int:
    return int(
        scalar(
            sql,
            "SELECT count(*) FROM agent_conversations WHERE owner_id = %s AND title = %s",
            person.id,
            title,
        )
    )


def test_a_creation_sent_again_with_its_key_is_the_first_conversation(api, sql, person):
    key = uuid.uuid4().hex
    first = _create(api, person, key, "Once")
    again = _create(api, person, key, "Once")
    assert first.status_code == again.status_code == 201, again.text
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert _count(sql, person, "Once") == 1


def test_the_same_key_with_another_body_is_refused(api, sql, person):
    key = uuid.uuid4().hex
    assert _create(api, person, key, "First body").status_code == 201
    assert_error(_create(api, person, key, "Second body"), 422, "IDEMPOTENCY_KEY_REUSED")
    assert _count(sql, person, "Second body") == 0


def test_another_users_same_key_is_their_own(api, sql, new_user: NewUser, person):
    other = new_user("viewer", prefix="idem")
    key = uuid.uuid4().hex
    mine = _create(api, person, key, "Same key")
    theirs = _create(api, other, key, "Same key")
    assert mine.status_code == theirs.status_code == 201
    assert theirs.json()["id"] != mine.json()["id"]
    assert "Idempotent-Replayed" not in theirs.headers
    assert _count(sql, person, "Same key") == _count(sql, other, "Same key") == 1


def test_without_a_key_every_write_is_done(api, sql, person):
    assert _create(api, person, None, "No key").status_code == 201
    assert _create(api, person, None, "No key").status_code == 201
    assert _count(sql, person, "No key") == 2


@pytest.mark.parametrize("key", [b"k" * 65, b"with space", "é".encode()])
def test_a_key_over_64_characters_or_not_visible_ascii_is_refused(api, sql, person, key):
    refused = api.post(
        BASE,
        json={"title": "Bad key"},
        headers={**person.headers, "Idempotency-Key": key},
    )
    assert_error(refused, 422, "INVALID_INPUT")
    assert _count(sql, person, "Bad key") == 0


def test_a_key_of_64_characters_is_taken(api, sql, person):
    assert _create(api, person, "k" * 64, "Long key").status_code == 201
    assert _create(api, person, "k" * 64, "Long key").headers["Idempotent-Replayed"] == "true"
    assert _count(sql, person, "Long key") == 1


def test_duplicates_sent_at_once_do_the_write_once(backend_url, sql, person):
    key, title, n = uuid.uuid4().hex, f"At once {uuid.uuid4().hex[:6]}", 8
    barrier = threading.Barrier(n)

    def send(_: int) -> httpx.Response:
        with httpx.Client(base_url=backend_url, timeout=30) as client:
            barrier.wait()
            return _create(client, person, key, title)

    with ThreadPoolExecutor(n) as pool:
        answers = list(pool.map(send, range(n)))
    created = [a for a in answers if a.status_code == 201]
    # each waits for the first one's commit and gets its answer; a repeat that outwaits it
    # would be 409 IDEMPOTENCY_KEY_IN_PROGRESS, never a second conversation
    for answer in answers:
        if answer.status_code != 201:
            assert_error(answer, 409, "IDEMPOTENCY_KEY_IN_PROGRESS")
    assert created and {a.json()["id"] for a in created} == {created[0].json()["id"]}
    assert _count(sql, person, title) == 1


def test_a_failed_write_is_not_remembered(api, sql, person):
    key = uuid.uuid4().hex
    too_long = api.post(
        BASE, json={"title": "x" * 10_000}, headers={**person.headers, "Idempotency-Key": key}
    )
    assert too_long.status_code == 422, too_long.text
    # the key is free again: the corrected write (another body) is done
    assert _create(api, person, key, "Corrected").status_code == 201
    assert _count(sql, person, "Corrected") == 1


def test_an_update_and_an_archive_sent_again_are_answered_as_the_first_time(api, sql, person):
    cid = _create(api, person, None, "To rename").json()["id"]
    rename = {**person.headers, "Idempotency-Key": uuid.uuid4().hex}
    first = api.patch(f"{BASE}/{cid}", json={"title": "Renamed"}, headers=rename)
    assert first.status_code == 200, first.text
    # someone renames it meanwhile; the repeat is still the first answer, and changes nothing
    assert api.patch(f"{BASE}/{cid}", json={"title": "Later"}, headers=person.headers).is_success
    again = api.patch(f"{BASE}/{cid}", json={"title": "Renamed"}, headers=rename)
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    title = scalar(sql, "SELECT title FROM agent_conversations WHERE id = %s", cid)
    assert title == "Later"
    archive = {**person.headers, "Idempotency-Key": uuid.uuid4().hex}
    gone = api.delete(f"{BASE}/{cid}", headers=archive)
    assert gone.status_code in (200, 204), gone.text
    repeat = api.delete(f"{BASE}/{cid}", headers=archive)
    assert repeat.status_code == gone.status_code
    assert repeat.headers["Idempotent-Replayed"] == "true"


def test_the_agents_write_on_behalf_of_the_owner_is_stored_once(api, sql, person):
    cid = _create(api, person, None, "Agent writes").json()["id"]
    headers = {**person.agent, "Idempotency-Key": uuid.uuid4().hex}
    body = {"role": "user", "content": "hello", "metadata": {}}
    first = api.post(f"{BASE}/{cid}/messages", json=body, headers=headers)
    again = api.post(f"{BASE}/{cid}/messages", json=body, headers=headers)
    assert first.status_code == again.status_code == 201, again.text
    assert again.json()["id"] == first.json()["id"]
    stored = scalar(sql, "SELECT count(*) FROM agent_messages WHERE conversation_id = %s", cid)
    assert stored == 1


def test_a_key_is_kept_for_its_user_only_and_swept_after_24_hours(api, sql, person):
    key = uuid.uuid4().hex
    assert _create(api, person, key, "Old key").status_code == 201
    sql.execute(
        "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' "
        "WHERE user_id = %s AND key = %s",
        (person.id, key),
    )
    sql.commit()
    # past 24 hours the key is free: the same key makes a second conversation
    later = _create(api, person, key, "Old key")
    assert later.status_code == 201 and "Idempotent-Replayed" not in later.headers
    assert _count(sql, person, "Old key") == 2


def test_a_token_created_again_with_its_key_is_the_same_token_and_its_secret_is_sealed_at_rest(
    api, sql, person
):
    key = uuid.uuid4().hex
    headers = {**person.headers, "Idempotency-Key": key}
    first = api.post("/api/auth/tokens", json={"name": "ci", "scope": "read"}, headers=headers)
    again = api.post("/api/auth/tokens", json={"name": "ci", "scope": "read"}, headers=headers)
    assert first.status_code == again.status_code == 201, first.text
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    secret = first.json()["token"]
    assert secret.startswith("acp_")
    kept = scalar(
        sql,
        "SELECT body FROM idempotency_keys WHERE user_id = %s AND key = %s",
        person.id,
        key,
    )
    assert kept and secret.encode() not in bytes(kept)
    count = "SELECT count(*) FROM personal_access_tokens WHERE user_id = %s AND name = 'ci'"
    assert int(scalar(sql, count, person.id)) == 1


def unanswered_key(sql, person: Person, key: str, method: str, path: str, body: bytes) -> None:
    """A key as a first request leaves it when its process or database is lost after its
    commit and before its answer was kept: claimed, with no answer."""
    body_sha = hashlib.sha256(body).hexdigest()
    fingerprint = hashlib.sha256(f"{method} {path}?\n{body_sha}".encode()).hexdigest()
    sql.execute(
        "INSERT INTO idempotency_keys (user_id, key, fingerprint, created_at)"
        " VALUES (%s, %s, %s, now())",
        (person.id, key, fingerprint),
    )


def test_a_write_whose_first_request_never_answered_is_409_not_done_twice(api, sql, person):
    key, title = uuid.uuid4().hex, f"Unanswered {uuid.uuid4().hex[:6]}"
    body = httpx.Request("POST", "http://x", json={"title": title}).read()
    unanswered_key(sql, person, key, "POST", BASE, body)
    started = time.monotonic()
    again = api.post(
        BASE,
        content=body,
        headers={**person.headers, "Idempotency-Key": key, "Content-Type": "application/json"},
    )
    assert_error(again, 409, "IDEMPOTENCY_KEY_IN_PROGRESS")
    assert time.monotonic() - started >= 4.5  # it waited for the first one's answer first
    assert _count(sql, person, title) == 0
