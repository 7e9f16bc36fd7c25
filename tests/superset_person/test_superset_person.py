"""Black-box: what a person sees through the platform is what their own Superset lets them see
(SUPERSET__IDENTITY=person), against real AUTH_LDAP Supersets and a real slapd."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.agent.mcp_support import mcp_session, wait_ready
from tests.agent.support import Chat, of_type, text_of
from tests.conftest import PASSWORDS, bearer, login
from tests.superset_person.conftest import ALLOWED, HIDDEN, RLS_CLAUSE, Stack
from tests.support import superset
from tests.support.superset_build import SupersetAdmin

pytestmark = pytest.mark.timeout(600)


def _sign_in(api: httpx.Client, stack: Stack, name: str) -> dict[str, str]:
    person = stack.people[name]
    return bearer(login(api, person.username, person.password))


@pytest.fixture(scope="module")
def ids(api: httpx.Client, person_stack: Stack, synced: None) -> dict[str, int]:
    """Platform dashboard id by title, read from the database (nobody's Superset view)."""
    url = make_url(person_stack.database_url).set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False)) as conn:
        rows = conn.execute("SELECT title, id FROM dashboards").fetchall()
    return {str(title): int(id_) for title, id_ in rows}


@pytest.fixture(scope="module")
def alice(api: httpx.Client, person_stack: Stack, synced: None) -> dict[str, str]:
    return _sign_in(api, person_stack, "alice")


def _error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert body["code"] == code, body
    return dict(body)


def test_directory_sign_in_opens_a_session_in_each_environment(api, person_stack, alice):
    body = api.get("/api/superset/session", headers=alice).json()
    name = person_stack.people["alice"].username
    assert body == {
        "environments": {
            "staging": {"connected": True, "username": name},
            "production": {"connected": True, "username": name},
        }
    }


def test_list_and_search_show_only_what_their_superset_shows(api, alice, ids):
    listed = api.get("/api/dashboards", headers=alice).json()
    assert [item["title"] for item in listed["items"]] == [ALLOWED]
    assert listed["total"] == 1
    found = api.get("/api/dashboards", params={"query": "Returns"}, headers=alice).json()
    assert found == {"items": [], "total": 0}
    found = api.get("/api/dashboards", params={"query": "Regional"}, headers=alice).json()
    assert [item["id"] for item in found["items"]] == [ids[ALLOWED]]


def test_the_hidden_dashboard_is_404_everywhere(api, alice, ids):
    hidden = ids[HIDDEN]
    for path in (
        f"/api/dashboards/{hidden}",
        f"/api/dashboards/{hidden}/health",
        f"/api/dashboards/{hidden}/charts/c1/data",
        f"/api/dashboards/{hidden}/branches",
        f"/api/dashboards/{hidden}/deployments",
    ):
        _error(api.get(path, headers=alice), 404, "NOT_FOUND")
    assert api.get(f"/api/dashboards/{ids[ALLOWED]}", headers=alice).status_code == 200


def _chart_key(api: httpx.Client, headers: dict[str, str], dashboard_id: int) -> str:
    body = api.get(f"/api/dashboards/{dashboard_id}", headers=headers).json()
    return str(body["main"]["definition"]["charts"][0]["key"])


def test_row_level_security_filters_chart_data_and_health(api, alice, ids):
    allowed = ids[ALLOWED]
    key = _chart_key(api, alice, allowed)
    data = api.get(f"/api/dashboards/{allowed}/charts/{key}/data", headers=alice)
    assert data.status_code == 200, data.text
    rows = data.json()["rows"]
    assert rows and {row[0] for row in rows} == {"north"}, (rows, RLS_CLAUSE)
    health = api.get(f"/api/dashboards/{allowed}/health", headers=alice)
    assert health.status_code == 200, health.text
    charts = health.json()["latest_run"]["charts"]
    assert [c["row_count"] for c in charts] == [1]


def test_without_a_superset_session_login_required(api, ids):
    viewer = bearer(login(api, "viewer", PASSWORDS["viewer"]))  # a local account
    state = api.get("/api/superset/session", headers=viewer).json()
    assert state["environments"]["staging"] == {"connected": False, "username": None}
    _error(api.get("/api/dashboards", headers=viewer), 403, "SUPERSET_LOGIN_REQUIRED")
    _error(
        api.get(f"/api/dashboards/{ids[ALLOWED]}", headers=viewer), 403, "SUPERSET_LOGIN_REQUIRED"
    )


def test_connect_by_hand_wrong_password_stores_nothing_then_forget(api, person_stack, ids):
    viewer = bearer(login(api, "editor", PASSWORDS["editor"]))
    carl = person_stack.people["carl"]
    for password in ("wrong-password", ""):
        body = {"environment": "staging", "username": carl.username, "password": password}
        response = api.post("/api/superset/session", json=body, headers=viewer)
        assert response.status_code == 401, response.text
    state = api.get("/api/superset/session", headers=viewer).json()
    assert state["environments"]["staging"]["connected"] is False
    body = {"environment": "staging", "username": carl.username, "password": carl.password}
    response = api.post("/api/superset/session", json=body, headers=viewer)
    assert response.status_code == 200, response.text
    assert response.json()["environments"]["staging"] == {
        "connected": True,
        "username": carl.username,
    }
    listed = api.get("/api/dashboards", headers=viewer).json()
    assert [item["title"] for item in listed["items"]] == [ALLOWED]
    assert api.delete("/api/superset/session", headers=viewer).status_code == 204
    _error(api.get("/api/dashboards", headers=viewer), 403, "SUPERSET_LOGIN_REQUIRED")


def test_deploy_needs_their_own_superset_permission(api, person_stack, ids):
    dora = _sign_in(api, person_stack, "dora")  # a platform admin, a Gamma in Superset
    body = {"environment": "production", "ref": "main", "force": True}
    response = api.post(f"/api/dashboards/{ids[ALLOWED]}/deployments", json=body, headers=dora)
    _error(response, 403, "SUPERSET_FORBIDDEN")
    history = api.get(f"/api/dashboards/{ids[ALLOWED]}/deployments", headers=dora).json()
    assert all(item["environment"] != "production" for item in history["items"])


def test_no_password_stored_anywhere(api, person_stack, alice):
    url = make_url(person_stack.database_url).render_as_string(hide_password=False)
    dump = subprocess.run(
        [shutil.which("pg_dump") or "/usr/bin/pg_dump", "--data-only", url],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "superset_sessions" in dump
    log = person_stack.log.read_text()
    for person in person_stack.people.values():
        assert person.password not in dump
        assert person.password not in log


def _conversation(api: httpx.Client, headers: dict[str, str]) -> str:
    response = api.post("/api/assistant/conversations", json={}, headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _tool_events(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["metadata"] for m in messages if m["metadata"].get("type") in TOOL_EVENTS]


TOOL_EVENTS = ("tool_end", "tool_error")


def test_the_agent_finds_only_their_dashboard_and_their_rows(
    api, alice, ids, person_agent, person_llm
):
    chat = Chat(person_agent)
    cid = _conversation(api, alice)
    person_llm.enqueue(
        {"tool_calls": [{"name": "search_dashboards", "args": {"query": "Returns"}}]},
        {"tool_calls": [{"name": "search_dashboards", "args": {}}]},
        {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": ids[HIDDEN]}}]},
        {"tool_calls": [{"name": "dashboard_health", "args": {"dashboard_id": ids[ALLOWED]}}]},
        {"text": "You see Regional sales; its table has one region."},
    )
    token = alice["Authorization"].removeprefix("Bearer ")
    outputs = chat.send(token, cid, "Which dashboards can I see?")
    cards = _tool_events(outputs[-1])
    assert cards[0]["output"]["items"] == []
    assert [i["id"] for i in cards[1]["output"]["items"]] == [ids[ALLOWED]]
    assert cards[2]["type"] == "tool_error" and cards[2]["error"]["code"] == "NOT_FOUND"
    health = cards[3]["output"]["latest_run"]["charts"]
    assert [c["row_count"] for c in health] == [1]
    assert text_of(outputs[-1]).startswith("You see Regional sales")
    sent = str(person_llm.requests)
    assert "south" not in sent and "Returns board" not in sent


def test_the_mcp_server_shows_only_their_dashboard(api, person_stack, alice, ids, person_agent):
    wait_ready(person_agent)
    token = alice["Authorization"].removeprefix("Bearer ")

    async def calls(session: Any) -> tuple[Any, Any]:
        found = await session.call_tool("search_dashboards", {})
        hidden = await session.call_tool("get_dashboard", {"dashboard_id": ids[HIDDEN]})
        return found, hidden

    found, hidden = asyncio.run(mcp_session(person_agent, token, calls))
    assert not found.isError, found.content
    assert [i["id"] for i in found.structuredContent["items"]] == [ids[ALLOWED]]
    assert hidden.isError and hidden.structuredContent["code"] == "NOT_FOUND"


def test_the_agent_without_a_superset_session_says_login_required(api, person_agent, person_llm):
    viewer = bearer(login(api, "viewer", PASSWORDS["viewer"]))
    chat = Chat(person_agent)
    cid = _conversation(api, viewer)
    person_llm.enqueue(
        {"tool_calls": [{"name": "search_dashboards", "args": {}}]},
        {"text": "Connect your Superset account first."},
    )
    outputs = chat.send(viewer["Authorization"].removeprefix("Bearer "), cid, "My dashboards?")
    (card,) = of_type(outputs[-1], "tool_error")
    assert card["metadata"]["error"]["code"] == "SUPERSET_LOGIN_REQUIRED", card


def test_a_personal_access_token_sees_what_its_owner_sees(api, alice, ids):
    created = api.post("/api/auth/tokens", json={"name": "mine", "scope": "read"}, headers=alice)
    assert created.status_code == 201, created.text
    token = {"Authorization": f"Bearer {created.json()['token']}"}
    listed = api.get("/api/dashboards", headers=token).json()
    assert [i["id"] for i in listed["items"]] == [ids[ALLOWED]]
    _error(api.get(f"/api/dashboards/{ids[HIDDEN]}", headers=token), 404, "NOT_FOUND")


def test_a_change_in_superset_reaches_them_within_a_minute(api, person_stack, alice, ids):
    """It takes the role's dataset away in Superset, then gives it back: the browser tests of
    this group's stack (another module, run after this one) still see the role's dashboard."""
    assert [i["id"] for i in api.get("/api/dashboards", headers=alice).json()["items"]] == [
        ids[ALLOWED]
    ]
    admin = SupersetAdmin(
        person_stack.instances["staging"].url, superset.ADMIN_USER, superset.ADMIN_PASSWORD
    )
    try:
        q = "(filters:!((col:name,opr:eq,value:Regional)))"
        role = admin.call("GET", "/api/v1/security/roles/", params={"q": q})["result"][0]["id"]
        granted = [
            int(p["id"])
            for p in admin.call("GET", f"/api/v1/security/roles/{role}/permissions/")["result"]
        ]
        assert granted, "the Regional role has its datasource_access"
        _grant(admin, role, [])
        try:
            changed = time.monotonic()
            while time.monotonic() - changed < 60:
                listed = api.get("/api/dashboards", headers=alice).json()
                if listed["total"] == 0:
                    break
                time.sleep(2)
            assert listed == {"items": [], "total": 0}
            _error(api.get(f"/api/dashboards/{ids[ALLOWED]}", headers=alice), 404, "NOT_FOUND")
        finally:
            _grant(admin, role, granted)
    finally:
        admin.close()


def _grant(admin: SupersetAdmin, role: int, permission_view_menus: list[int]) -> None:
    admin.call(
        "POST",
        f"/api/v1/security/roles/{role}/permissions",
        json={"permission_view_menu_ids": permission_view_menus},
    )
