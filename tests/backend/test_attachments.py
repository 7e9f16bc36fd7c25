"""Attachments over HTTP: the agent records what a user attached (all or none, audited); the
owner lists and reads them; everyone else gets 404."""

from __future__ import annotations

import hashlib

import pytest

from tests.backend.support import (
    NewUser,
    Person,
    append,
    assert_error,
    audit_rows,
    create_conversation,
    scalar,
)

BASE = "/api/assistant/conversations"


def path(cid: str) -> str:
    return f"{BASE}/{cid}/attachments"


def item(name: str = "report.pdf", **overrides: object) -> dict[str, object]:
    body: dict[str, object] = {
        "name": name,
        "content_type": "application/pdf",
        "size": 1874,
        "sha256": hashlib.sha256(name.encode()).hexdigest(),
        "extracted_text": f"--- page 1 of 1 ---\nText of {name}",
        "truncated": False,
    }
    return {**body, **overrides}


@pytest.fixture()
def person(new_user: NewUser) -> Person:
    return new_user("viewer", prefix="att")


def count_rows(sql, cid: str) -> int:
    return int(
        scalar(sql, "SELECT count(*) FROM agent_attachments WHERE conversation_id = %s", cid)
    )


def test_agent_records_a_messages_files_and_the_owner_lists_and_reads_them(api, sql, person):
    cid = create_conversation(api, person.headers)["id"]
    message = append(api, person.agent, cid, "summarise these")
    sheet = item(
        "book.xlsx",
        content_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        truncated=True,
    )
    body = {"message_id": message["id"], "items": [item(), sheet]}

    created = api.post(path(cid), json=body, headers=person.agent)

    assert created.status_code == 201, created.text
    items = created.json()["items"]
    assert [(i["name"], i["message_id"], i["truncated"]) for i in items] == [
        ("report.pdf", message["id"], False),
        ("book.xlsx", message["id"], True),
    ]
    stored = scalar(
        sql, "SELECT extracted_text FROM agent_attachments WHERE id = %s", items[0]["id"]
    )
    assert stored == "--- page 1 of 1 ---\nText of report.pdf"
    for row in items:
        (event,) = audit_rows(sql, action="attachment.create", resource_id=row["id"])
        assert str(event["actor_user_id"]) == person.id
        assert event["service_client_id"] == "agent-chat"
        assert event["details"]["sha256"] == row["sha256"]

    listed = api.get(path(cid), headers=person.headers)
    assert listed.status_code == 200, listed.text
    assert listed.json()["total"] == 2
    assert [i["name"] for i in listed.json()["items"]] == ["report.pdf", "book.xlsx"]
    assert "extracted_text" not in listed.json()["items"][0]

    one = api.get(f"{path(cid)}/{items[0]['id']}", headers=person.headers)
    assert one.status_code == 200, one.text
    assert one.json()["extracted_text"] == stored
    assert one.json()["size"] == 1874


def test_a_batch_sent_again_for_the_same_message_is_stored_once(api, sql, person):
    """The agent resends a batch whose answer a fault lost (agent/runs/writes.py): the second
    answer is the rows the first stored, and no row or audit row is added."""
    cid = create_conversation(api, person.headers)["id"]
    message = append(api, person.agent, cid, "summarise this")
    body = {"message_id": message["id"], "items": [item()]}

    first = api.post(path(cid), json=body, headers=person.agent)
    again = api.post(path(cid), json=body, headers=person.agent)

    assert first.status_code == 201, first.text
    assert again.status_code == 201, again.text
    assert [i["id"] for i in again.json()["items"]] == [i["id"] for i in first.json()["items"]]
    assert count_rows(sql, cid) == 1
    (row,) = first.json()["items"]
    assert len(audit_rows(sql, action="attachment.create", resource_id=row["id"])) == 1


def test_attachments_without_a_message_are_recorded_with_a_null_link(api, sql, person):
    cid = create_conversation(api, person.headers)["id"]
    created = api.post(path(cid), json={"items": [item()]}, headers=person.agent)
    assert created.status_code == 201, created.text
    assert created.json()["items"][0]["message_id"] is None
    assert count_rows(sql, cid) == 1


def test_the_users_own_token_cannot_record_attachments(api, sql, person):
    cid = create_conversation(api, person.headers)["id"]
    response = api.post(path(cid), json={"items": [item()]}, headers=person.headers)
    assert_error(response, 403, "FORBIDDEN")
    assert count_rows(sql, cid) == 0


def test_someone_elses_conversation_and_attachments_are_not_found(api, sql, person, new_user):
    cid = create_conversation(api, person.headers)["id"]
    recorded = api.post(path(cid), json={"items": [item()]}, headers=person.agent)
    attachment_id = recorded.json()["items"][0]["id"]
    stranger = new_user("admin", prefix="stranger")

    assert_error(
        api.post(path(cid), json={"items": [item()]}, headers=stranger.agent), 404, "NOT_FOUND"
    )
    assert_error(api.get(path(cid), headers=stranger.headers), 404, "NOT_FOUND")
    assert_error(
        api.get(f"{path(cid)}/{attachment_id}", headers=stranger.headers), 404, "NOT_FOUND"
    )
    assert count_rows(sql, cid) == 1


def test_an_attachment_is_only_found_under_its_own_conversation(api, person):
    first = create_conversation(api, person.headers)["id"]
    second = create_conversation(api, person.headers)["id"]
    recorded = api.post(path(first), json={"items": [item()]}, headers=person.agent)
    attachment_id = recorded.json()["items"][0]["id"]
    assert_error(
        api.get(f"{path(second)}/{attachment_id}", headers=person.headers), 404, "NOT_FOUND"
    )


def test_a_message_of_another_conversation_is_refused_and_nothing_is_written(api, sql, person):
    cid = create_conversation(api, person.headers)["id"]
    other = create_conversation(api, person.headers)["id"]
    foreign = append(api, person.agent, other, "elsewhere")
    body = {"message_id": foreign["id"], "items": [item("a.pdf"), item("b.pdf")]}
    assert_error(api.post(path(cid), json=body, headers=person.agent), 404, "NOT_FOUND")
    assert count_rows(sql, cid) == 0


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"sha256": "not-a-hash"}, "sha256"),
        ({"content_type": "application/x-msdownload"}, "content_type"),
        ({"name": ""}, "name"),
        ({"size": -1}, "size"),
        ({"extracted_text": "x" * 500_001}, "extracted_text"),
    ],
)
def test_a_malformed_item_is_refused_with_the_field_named(api, sql, person, overrides, field):
    cid = create_conversation(api, person.headers)["id"]
    body = {"items": [item("ok.pdf"), item(**overrides)]}
    error = assert_error(api.post(path(cid), json=body, headers=person.agent), 422, "INVALID_INPUT")
    assert any(field in e["loc"] for e in error["details"]["errors"]), error
    assert count_rows(sql, cid) == 0


def test_an_empty_batch_is_refused(api, person):
    cid = create_conversation(api, person.headers)["id"]
    assert_error(
        api.post(path(cid), json={"items": []}, headers=person.agent), 422, "INVALID_INPUT"
    )


def test_a_file_over_the_size_limit_is_refused_with_the_limit(api, sql, person):
    cid = create_conversation(api, person.headers)["id"]
    limit = 10 * 1024 * 1024
    body = {"items": [item(size=limit), item("big.pdf", size=limit + 1)]}
    error = assert_error(
        api.post(path(cid), json=body, headers=person.agent), 413, "FILE_TOO_LARGE"
    )
    assert error["details"] == {"name": "big.pdf", "limit": limit}
    assert count_rows(sql, cid) == 0


def test_more_files_than_a_message_may_carry_are_refused(api, sql, person):
    cid = create_conversation(api, person.headers)["id"]
    body = {"items": [item(f"f{i}.pdf") for i in range(6)]}
    error = assert_error(api.post(path(cid), json=body, headers=person.agent), 422, "INVALID_INPUT")
    assert error["details"] == {"max_files": 5}
    assert count_rows(sql, cid) == 0


def test_an_archived_conversation_takes_no_new_attachments(api, sql, person):
    cid = create_conversation(api, person.headers)["id"]
    assert api.delete(f"{BASE}/{cid}", headers=person.headers).status_code == 204
    response = api.post(path(cid), json={"items": [item()]}, headers=person.agent)
    assert_error(response, 409, "CONVERSATION_ARCHIVED")
    assert count_rows(sql, cid) == 0
