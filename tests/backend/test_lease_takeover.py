"""`PUT /api/agent/conversations/{id}/lease` with `take_over` (agent/runs/takeover.py): a live
lease is taken at once from the holder the agent names as dead, audited as `took_over`; naming
any other holder takes nothing, and the lease stays the live holder's."""

from __future__ import annotations

import pytest

from tests.backend.support import (
    NewUser,
    Person,
    assert_error,
    audit_rows,
    create_conversation,
    scalar,
)

HOLDER = "SELECT holder FROM agent_runs WHERE conversation_id = %s"


def lease_path(cid: str) -> str:
    return f"/api/agent/conversations/{cid}/lease"


@pytest.fixture()
def person(new_user: NewUser) -> Person:
    return new_user("viewer", prefix="takeover")


def test_a_live_lease_is_taken_from_the_holder_named_dead_and_only_from_it(api, sql, person):
    cid = create_conversation(api, person.headers)["id"]
    taken = api.put(
        lease_path(cid), json={"holder": "host:1:dead", "ttl_s": 60}, headers=person.agent
    )
    assert taken.status_code == 200, taken.text

    wrong = {"holder": "host:2:new", "take_over": "host:9:someone-else"}
    assert_error(
        api.put(lease_path(cid), json=wrong, headers=person.agent), 409, "CONVERSATION_BUSY"
    )
    plain = {"holder": "host:2:new"}
    assert_error(
        api.put(lease_path(cid), json=plain, headers=person.agent), 409, "CONVERSATION_BUSY"
    )
    assert scalar(sql, HOLDER, cid) == "host:1:dead"

    over = api.put(
        lease_path(cid),
        json={"holder": "host:2:new", "take_over": "host:1:dead"},
        headers=person.agent,
    )

    assert over.status_code == 200, over.text
    assert over.json()["holder"] == "host:2:new"
    assert scalar(sql, HOLDER, cid) == "host:2:new"
    acquired = audit_rows(sql, action="conversation.lease_acquire", resource_id=cid)
    assert [(r["details"]["holder"], r["details"].get("took_over")) for r in acquired] == [
        ("host:1:dead", None),
        ("host:2:new", "host:1:dead"),
    ]
    # the dead holder's renewal, should it come after all, finds the lease gone
    late = api.put(lease_path(cid), json={"holder": "host:1:dead"}, headers=person.agent)
    assert_error(late, 409, "CONVERSATION_BUSY")


def test_take_over_is_only_for_the_agent_service(api, person):
    cid = create_conversation(api, person.headers)["id"]
    body = {"holder": "host:2:new", "take_over": "host:1:dead"}
    refused = api.put(lease_path(cid), json=body, headers=person.headers)
    assert refused.status_code in (401, 403), refused.text
