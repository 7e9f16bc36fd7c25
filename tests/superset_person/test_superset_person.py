"""Black-box: what a person sees through the platform is what their own Superset lets them see
(SUPERSET__IDENTITY=person), against real AUTH_LDAP Supersets and a real slapd."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.conftest import PASSWORDS, bearer, login
from tests.superset_person.conftest import ALLOWED, HIDDEN, RLS_CLAUSE, Stack

pytestmark = pytest.mark.timeout(600)


def _sign_in(api: httpx.Client, stack: Stack, name: str) -> dict[str, str]:
    person = stack.people[name]
    return bearer(login(api, person.username, person.password))


@pytest.fixture(scope="module")
def synced(api: httpx.Client) -> None:
    admin = bearer(login(api, "admin", PASSWORDS["admin"]))
    response = api.post("/api/admin/superset/sync", headers=admin)
    assert response.status_code == 200, response.text
    assert response.json()["dashboards"] == 2


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
    return str(body["definition"]["charts"][0]["key"])


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
