"""Directory sign-in against a real OpenLDAP `slapd` the tests write: a search with the bind
account, a bind as the person, groups to roles at every sign-in, and the boundary an attacker
would try (filter injection, an empty password, a local account's name)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.backend.support import assert_error, audit_rows, scalar
from tests.conftest import bearer
from tests.support import slapd
from tests.support.processes import serve

ROLE_MAP = {"bi-admins": "admin", "bi-editors": "editor", "bi-viewers": "viewer"}
LOGIN = "/api/auth/login"


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[slapd.Directory]:
    if reason := slapd.missing():
        pytest.skip(reason)
    with slapd.running_slapd(tmp_path_factory.mktemp("slapd")) as found:
        found.add_group("bi-admins", [slapd.ROOT_DN])  # a groupOfNames needs one member
        found.add_group("bi-editors", [slapd.ROOT_DN])
        found.add_group("bi-viewers", [slapd.ROOT_DN])
        found.add_group("lunch-club", [slapd.ROOT_DN])
        yield found


@pytest.fixture(scope="module")
def backend_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ldap-backend") / "backend.log"


@pytest.fixture(scope="module")
def ldap_api(
    seeded: dict[str, str], directory: slapd.Directory, backend_log: Path
) -> Iterator[httpx.Client]:
    """A backend of the suite's database with the directory configured."""
    env = {
        **seeded,
        "LOG_LEVEL": "INFO",
        "LDAP__URL": directory.url,
        "LDAP__BIND_DN": slapd.BIND_DN,
        "LDAP__BIND_PASSWORD": slapd.BIND_PASSWORD,
        "LDAP__USER_BASE": slapd.PEOPLE,
        "LDAP__GROUP_BASE": slapd.GROUPS,
        "AUTH__ROLE_MAP": json.dumps(ROLE_MAP),
    }
    with (
        serve(["backend"], env, health_path="/readyz", log_path=backend_log) as (base, _),
        httpx.Client(base_url=base, timeout=30) as client,
    ):
        yield client


def _person(directory: slapd.Directory, *groups: str) -> tuple[str, str, str]:
    uid = f"ldap_{uuid.uuid4().hex[:8]}"
    password = f"pw-{uuid.uuid4().hex}"
    dn = directory.add_person(uid, password)
    for group in groups:
        directory.add_member(group, dn)
    return uid, password, dn


def _users_named(sql, username: str) -> int:
    return int(scalar(sql, "SELECT count(*) FROM users WHERE username = %s", username))


def test_providers_say_ldap_and_no_oidc_and_never_the_bind_password(ldap_api):
    body = ldap_api.get("/api/auth/providers").json()
    assert body == {"password": True, "ldap": True, "oidc": None}


def test_a_directory_person_signs_in_with_the_role_of_their_group(ldap_api, directory, sql):
    uid, password, dn = _person(directory, "bi-editors", "lunch-club")
    response = ldap_api.post(LOGIN, json={"username": uid, "password": password})
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body["user"]) == {"id", "username", "roles"}
    assert (body["user"]["username"], body["user"]["roles"]) == (uid, ["editor"])

    me = ldap_api.get("/api/auth/me", headers=bearer(body["access_token"])).json()
    assert (me["source"], me["roles"]) == ("ldap", ["editor"])
    row = sql.execute(
        "SELECT source, external_issuer, external_subject, last_sign_in_at FROM users"
        " WHERE id = %s",
        (body["user"]["id"],),
    ).fetchone()
    assert row[:3] == ("ldap", "ldap", dn) and row[3] is not None
    [audit] = audit_rows(sql, action="auth.login", resource_id=body["user"]["id"])
    assert (audit["outcome"], audit["details"]["source"]) == ("success", "ldap")
    assert password not in json.dumps(audit["details"])


def test_the_highest_mapped_group_wins_and_leaving_it_lowers_the_role_at_next_sign_in(
    ldap_api, directory
):
    uid, password, dn = _person(directory, "bi-viewers", "bi-admins")
    first = ldap_api.post(LOGIN, json={"username": uid, "password": password}).json()
    assert first["user"]["roles"] == ["admin"]
    admin_call = ldap_api.get("/api/admin/users", headers=bearer(first["access_token"]))
    assert admin_call.status_code == 200

    directory.remove_member("bi-admins", dn)
    second = ldap_api.post(LOGIN, json={"username": uid, "password": password}).json()
    assert second["user"]["roles"] == ["viewer"]
    assert second["user"]["id"] == first["user"]["id"]  # the same account, keyed by DN
    # the roles are the account's: the token from before the change has lost admin too
    stale = ldap_api.get("/api/admin/users", headers=bearer(first["access_token"]))
    assert_error(stale, 403, "FORBIDDEN")


def test_a_person_in_no_mapped_group_is_refused_with_no_role_and_nothing_is_created(
    ldap_api, directory, sql
):
    uid, password, _ = _person(directory, "lunch-club")
    response = ldap_api.post(LOGIN, json={"username": uid, "password": password})
    assert_error(response, 403, "NO_ROLE")
    assert _users_named(sql, uid) == 0
    [audit] = audit_rows(sql, action="auth.login", actor_username=uid)
    assert (audit["outcome"], audit["details"]) == (
        "failure",
        {"source": "ldap", "reason": "no_role"},
    )


@pytest.mark.parametrize("password", ["", "wrong-password"])
def test_a_wrong_or_empty_password_is_the_same_401_and_creates_nothing(
    ldap_api, directory, sql, password
):
    uid, _, _ = _person(directory, "bi-admins")
    response = ldap_api.post(LOGIN, json={"username": uid, "password": password})
    unknown = ldap_api.post(LOGIN, json={"username": "nobody-here", "password": "x-pass"})
    assert_error(response, 401, "INVALID_CREDENTIALS")
    assert response.content == unknown.content
    assert _users_named(sql, uid) == 0
    [audit] = audit_rows(sql, action="auth.login", actor_username=uid)
    assert audit["details"] == {"source": "ldap", "reason": "invalid_credentials"}


@pytest.mark.parametrize(
    "username",
    ["*", "{uid}*", "*{tail}", "{uid})(uid=*", "*)(|(uid=*", "{uid})(|(cn=*)", "{uid}\\2a"],
)
def test_filter_characters_in_the_username_are_refused_not_searched(
    ldap_api, directory, sql, username
):
    uid, password, _ = _person(directory, "bi-admins")
    attack = username.format(uid=uid, tail=uid[2:])
    response = ldap_api.post(LOGIN, json={"username": attack, "password": password})
    assert_error(response, 401, "INVALID_CREDENTIALS")
    assert _users_named(sql, uid) == 0 and _users_named(sql, attack) == 0


def test_a_local_account_of_the_same_name_is_checked_locally_only(
    ldap_api, directory, sql, as_user
):
    local_password = f"local-{uuid.uuid4().hex}"
    uid, directory_password, _ = _person(directory, "bi-admins")
    created = ldap_api.post(
        "/api/admin/users",
        json={"username": uid, "password": local_password, "roles": ["viewer"]},
        headers=as_user["admin"],
    )
    assert created.status_code == 201, created.text

    as_directory = ldap_api.post(LOGIN, json={"username": uid, "password": directory_password})
    assert_error(as_directory, 401, "INVALID_CREDENTIALS")
    as_local = ldap_api.post(LOGIN, json={"username": uid, "password": local_password}).json()
    assert (as_local["user"]["id"], as_local["user"]["roles"]) == (created.json()["id"], ["viewer"])
    me = ldap_api.get("/api/auth/me", headers=bearer(as_local["access_token"])).json()
    assert me["source"] == "local"
    assert _users_named(sql, uid) == 1


def test_an_empty_password_of_a_local_account_is_401_not_422(ldap_api):
    response = ldap_api.post(LOGIN, json={"username": "admin", "password": ""})
    assert_error(response, 401, "INVALID_CREDENTIALS")


def test_the_admin_list_shows_each_person_source_and_last_sign_in(ldap_api, directory, as_user):
    uid, password, _ = _person(directory, "bi-viewers")
    assert ldap_api.post(LOGIN, json={"username": uid, "password": password}).status_code == 200
    items = ldap_api.get("/api/admin/users", headers=as_user["admin"]).json()["items"]
    by_name = {item["username"]: item for item in items}
    assert set(by_name[uid]) == {
        "id",
        "username",
        "roles",
        "source",
        "created_at",
        "last_sign_in_at",
    }
    assert (by_name[uid]["source"], by_name[uid]["roles"]) == ("ldap", ["viewer"])
    assert by_name[uid]["last_sign_in_at"] is not None
    assert by_name["admin"]["source"] == "local"


def test_viewers_cannot_list_users(ldap_api, as_user):
    assert_error(ldap_api.get("/api/admin/users", headers=as_user["viewer"]), 403, "FORBIDDEN")


def test_the_bind_password_is_in_no_log_answer_or_audit_row(ldap_api, backend_log, sql):
    assert slapd.BIND_PASSWORD not in ldap_api.get("/api/auth/providers").text
    assert slapd.BIND_PASSWORD not in backend_log.read_text(errors="replace")
    dumped = sql.execute("SELECT coalesce(string_agg(details::text, ''), '') FROM assistant_audit")
    assert slapd.BIND_PASSWORD not in dumped.fetchone()[0]
