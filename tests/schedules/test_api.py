"""Schedules over raw HTTP: create, read, change, delete, own only; every refusal a 422
envelope naming the rule (CONTRACT.md "Schedules")."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest

from tests.backend.support import assert_error

PROMPT = {"name": "Weekly question", "cron": "0 7 * * 1", "prompt": "How many orders?"}


def _create(sapi, headers, **body):
    response = sapi.post("/api/schedules", json={**PROMPT, **body}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def test_a_schedule_is_created_with_its_own_conversation_and_next_firings(sapi, as_user):
    body = _create(sapi, as_user["editor"], timezone="Europe/Berlin")

    assert set(body) >= {
        "id", "name", "cron", "every_s", "timezone", "prompt", "workflow", "sweep", "mode",
        "notify", "enabled", "conversation_id", "next_run_at", "created_at",
    }  # fmt: skip
    assert body["mode"] == "dynamic" and body["enabled"] is True and body["every_s"] is None
    upcoming = [datetime.fromisoformat(t) for t in body["upcoming"]]
    assert len(upcoming) == 3 and upcoming == sorted(upcoming)
    # 07:00 in Berlin on Mondays is 06:00 or 05:00 UTC, a week apart
    assert all(t.weekday() == 0 and t.hour in (5, 6) for t in upcoming)
    assert datetime.fromisoformat(body["next_run_at"]) == upcoming[0]
    conversation = sapi.get(
        f"/api/assistant/conversations/{body['conversation_id']}", headers=as_user["editor"]
    )
    assert conversation.status_code == 200 and conversation.json()["title"] == "Weekly question"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"cron": "0 7 * *"}, "cron"),  # four fields
        ({"cron": "0 7 * * * *"}, "cron"),  # six fields (seconds) are not ours
        ({"cron": "61 7 * * *"}, "cron"),
        ({"cron": "0 0 31 2 *"}, "cron"),  # never fires
        ({"timezone": "Mars/Olympus"}, "timezone"),
        ({"cron": None}, "cron"),  # neither cron nor every_s
        ({"every_s": 600}, "cron"),  # both
        ({"cron": None, "every_s": 1}, "every_s"),  # under schedules.min_interval_s
        ({"workflow": "dashboard_predeploy_check"}, "prompt"),  # prompt and workflow
        ({"prompt": None}, "prompt"),  # none of the three
        ({"prompt": None, "workflow": "no_such_workflow"}, "workflow"),
        ({"notify": {"webhook": "https://evil.example.com/hook"}}, "notify.webhook"),
        ({"notify": {"webhook": "http://hooks.example.org@evil.example.com/"}}, "notify.webhook"),
        ({"notify": {"webhook": "http://evil.example.com\\@hooks.example.org/"}}, "notify.webhook"),
        ({"notify": {"webhook": "http://user:pw@hooks.example.org/"}}, "notify.webhook"),
        ({"notify": {"webhook": "ftp://hooks.example.org/"}}, "notify.webhook"),
        ({"notify": {"webhook": "http://hooks.example.org.evil.com/"}}, "notify.webhook"),
    ],
)
def test_a_schedule_breaking_a_rule_is_422_and_not_stored(sapi, as_user, change, field):
    before = len(sapi.get("/api/schedules", headers=as_user["viewer"]).json()["items"])
    response = sapi.post("/api/schedules", json={**PROMPT, **change}, headers=as_user["viewer"])

    error = assert_error(response, 422, "INVALID_INPUT")
    assert error["details"]["field"] == field, error
    assert len(sapi.get("/api/schedules", headers=as_user["viewer"]).json()["items"]) == before


def test_bad_shapes_are_422_too(sapi, as_user):
    for body in (
        {**PROMPT, "sweep": {"environment": "moon"}, "prompt": None},
        {**PROMPT, "notify": {"email": ["not an address"]}},
        {**PROMPT, "mode": "yolo"},
        {**PROMPT, "unknown": 1},
    ):
        assert_error(
            sapi.post("/api/schedules", json=body, headers=as_user["viewer"]), 422, "INVALID_INPUT"
        )


def test_an_allowed_webhook_host_on_any_port_and_a_sweep_are_accepted(sapi, as_user):
    body = _create(
        sapi,
        as_user["editor"],
        prompt=None,
        sweep={"environment": "production"},
        notify={"email": ["team@example.org"], "webhook": "https://hooks.example.org:8443/x"},
    )
    assert body["sweep"] == {"environment": "production"}
    assert body["notify"] == {
        "email": ["team@example.org"],
        "webhook": "https://hooks.example.org:8443/x",
    }


def test_someone_elses_schedule_is_404_on_every_route(sapi, as_user):
    own = _create(sapi, as_user["editor"])
    path = f"/api/schedules/{own['id']}"
    stranger = as_user["viewer"]

    assert_error(sapi.get(path, headers=stranger), 404, "NOT_FOUND")
    assert_error(sapi.patch(path, json={"enabled": False}, headers=stranger), 404, "NOT_FOUND")
    assert_error(sapi.delete(path, headers=stranger), 404, "NOT_FOUND")
    assert_error(sapi.post(f"{path}/run", headers=stranger), 404, "NOT_FOUND")
    assert_error(sapi.get(f"{path}/runs", headers=stranger), 404, "NOT_FOUND")
    assert own["id"] not in {
        s["id"] for s in sapi.get("/api/schedules", headers=stranger).json()["items"]
    }
    assert_error(sapi.get(f"/api/schedules/{uuid.uuid4()}", headers=stranger), 404, "NOT_FOUND")
    assert sapi.get(path, headers=as_user["editor"]).json()["enabled"] is True  # untouched


def test_disable_enable_change_and_delete(sapi, as_user):
    own = _create(sapi, as_user["editor"])
    path = f"/api/schedules/{own['id']}"

    disabled = sapi.patch(path, json={"enabled": False}, headers=as_user["editor"]).json()
    assert disabled["enabled"] is False and disabled["next_run_at"] is None
    assert disabled["upcoming"] == []
    changed = sapi.patch(
        path, json={"enabled": True, "cron": None, "every_s": 3600}, headers=as_user["editor"]
    ).json()
    assert changed["every_s"] == 3600 and changed["cron"] is None and changed["next_run_at"]
    assert_error(
        sapi.patch(path, json={"every_s": None}, headers=as_user["editor"]), 422, "INVALID_INPUT"
    )
    assert sapi.delete(path, headers=as_user["editor"]).status_code == 204
    assert_error(sapi.get(path, headers=as_user["editor"]), 404, "NOT_FOUND")


def test_the_admin_view_lists_every_users_schedules_and_is_admin_only(sapi, as_user):
    own = _create(sapi, as_user["viewer"], name="viewer's own")

    listed = sapi.get("/api/admin/schedules", headers=as_user["admin"])
    assert listed.status_code == 200
    found = [s for s in listed.json()["items"] if s["id"] == own["id"]]
    assert found and found[0]["owner"] == "viewer"
    assert_error(sapi.get("/api/admin/schedules", headers=as_user["editor"]), 403, "FORBIDDEN")
    assert_error(sapi.get("/api/schedules"), 401, "UNAUTHORIZED")


def test_the_preview_gives_the_next_three_firings_in_the_time_zone(sapi, as_user):
    response = sapi.post(
        "/api/schedules/preview",
        json={"cron": "30 9 * * *", "timezone": "Asia/Tokyo"},
        headers=as_user["viewer"],
    )
    upcoming = [datetime.fromisoformat(t) for t in response.json()["upcoming"]]
    assert len(upcoming) == 3 and all(t.hour == 0 and t.minute == 30 for t in upcoming)
    bad = sapi.post("/api/schedules/preview", json={"cron": "x"}, headers=as_user["viewer"])
    assert_error(bad, 422, "INVALID_INPUT")
