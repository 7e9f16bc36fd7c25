"""OpenID Connect sign-in against a real provider (the npm `oidc-provider` on Node 20): the
authorization code flow with PKCE, state and nonce, the one-time login code, groups to roles;
and the attacks: a replayed, forged or foreign state, a forged ID token (another key, another
audience, another nonce, expired), a used or stale login code, an open redirect in `next`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.backend.support import assert_error, audit_rows, scalar
from tests.conftest import bearer
from tests.support import oidc_provider
from tests.support.oidc_provider import EXCHANGE, START, fragment, sign_in, sign_in_at_provider
from tests.support.processes import free_port, serve

ROLE_MAP = {"bi-admins": "admin", "bi-editors": "editor", "bi-viewers": "viewer"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if reason := oidc_provider.missing():
        pytest.skip(reason)
    return tmp_path_factory.mktemp("oidc")


@pytest.fixture(scope="module")
def issuer_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def oidc_backend(seeded: dict[str, str], folder: Path, issuer_port: int) -> Iterator[str]:
    """A backend of the suite's database with the provider configured (discovery is lazy, so
    the provider can start after it, once the callback's address is known)."""
    env = {
        **seeded,
        "LOG_LEVEL": "INFO",
        "OIDC__ISSUER": f"http://127.0.0.1:{issuer_port}",
        "OIDC__CLIENT_ID": oidc_provider.CLIENT_ID,
        "OIDC__CLIENT_SECRET": oidc_provider.CLIENT_SECRET,
        "OIDC__NAME": "Test IdP",
        "AUTH__ROLE_MAP": json.dumps(ROLE_MAP),
    }
    with serve(["backend"], env, health_path="/readyz", log_path=folder / "backend.log") as (
        base,
        _,
    ):
        yield base


@pytest.fixture(scope="module")
def provider(oidc_backend: str, folder: Path, issuer_port: int) -> Iterator[oidc_provider.Provider]:
    with oidc_provider.running_provider(
        folder, port=issuer_port, redirect_uris=[f"{oidc_backend}/api/auth/oidc/callback"]
    ) as found:
        yield found


@pytest.fixture()
def browser(oidc_backend: str) -> Iterator[httpx.Client]:
    """One browser: its own cookies, for the backend and the provider alike."""
    with httpx.Client(base_url=oidc_backend, timeout=30, follow_redirects=False) as client:
        yield client


@pytest.fixture(autouse=True)
def _honest_provider(provider: oidc_provider.Provider) -> Iterator[None]:
    yield
    provider.mischief("off")


def _person(provider: oidc_provider.Provider, *groups: str) -> tuple[str, str]:
    login, password = f"op_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex}"
    provider.set_person(login, password, list(groups), username=f"{login}.name")
    return login, password


def _users_with_subject(sql, subject: str) -> int:
    return int(scalar(sql, "SELECT count(*) FROM users WHERE external_subject = %s", subject))


def test_providers_name_the_button_and_the_login_url(browser, provider):
    body = browser.get("/api/auth/providers").json()
    assert body == {
        "password": True,
        "ldap": False,
        "oidc": {"name": "Test IdP", "login_url": START},
    }


def test_the_login_goes_to_the_provider_with_pkce_s256_state_and_nonce(browser, provider):
    response = browser.get(START, params={"next": "/chat"})
    location = urlsplit(response.headers["location"])
    query = {k: v[0] for k, v in parse_qs(location.query).items()}
    assert f"{location.scheme}://{location.netloc}" == provider.issuer
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["response_type"] == "code" and "openid" in query["scope"].split()
    assert len(query["state"]) >= 32 and len(query["nonce"]) >= 32
    assert query["client_id"] == oidc_provider.CLIENT_ID
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "path=/api/auth/oidc" in cookie


def test_a_person_signs_in_through_the_provider_and_the_code_answers_like_login(
    browser, provider, sql
):
    login, password = _person(provider, "bi-editors", "lunch-club")
    callback = browser.get(sign_in_at_provider(browser, login, password, "/chat?x=1"))
    assert callback.status_code == 302
    location = callback.headers["location"]
    assert location.startswith("/chat?x=1#login_code=")
    code = fragment(location)["login_code"]
    body = browser.post(EXCHANGE, json={"login_code": code}).json()
    assert set(body) == {"access_token", "token_type", "expires_in", "user"}
    assert set(body["user"]) == {"id", "username", "roles"}
    # `sub` keys the account; the name is the provider's preferred_username (from userinfo here)
    assert (body["user"]["username"], body["user"]["roles"]) == (f"{login}.name", ["editor"])
    me = browser.get("/api/auth/me", headers=bearer(body["access_token"])).json()
    assert (me["source"], me["roles"]) == ("oidc", ["editor"])
    row = sql.execute(
        "SELECT external_issuer, external_subject FROM users WHERE id = %s", (body["user"]["id"],)
    ).fetchone()
    assert row == (provider.issuer, login)
    [audit] = audit_rows(sql, action="auth.login", resource_id=body["user"]["id"])
    assert (audit["outcome"], audit["details"]["source"]) == ("success", "oidc")
    assert code not in json.dumps(audit["details"])


def test_a_login_code_works_once(browser, provider):
    login, password = _person(provider, "bi-viewers")
    location = browser.get(sign_in_at_provider(browser, login, password)).headers["location"]
    code = fragment(location)["login_code"]
    assert browser.post(EXCHANGE, json={"login_code": code}).status_code == 200
    assert_error(browser.post(EXCHANGE, json={"login_code": code}), 401, "SSO_FAILED")


def test_a_login_code_older_than_60_seconds_is_refused(browser, provider, sql):
    login, password = _person(provider, "bi-viewers")
    location = browser.get(sign_in_at_provider(browser, login, password)).headers["location"]
    sql.execute("UPDATE login_codes SET expires_at = now() - interval '1 second'")
    sql.commit()
    code = fragment(location)["login_code"]
    assert_error(browser.post(EXCHANGE, json={"login_code": code}), 401, "SSO_FAILED")


def test_an_invented_login_code_is_refused(browser, provider):
    forged = {"login_code": "A" * 43}
    assert_error(browser.post(EXCHANGE, json=forged), 401, "SSO_FAILED")


def test_a_replayed_state_is_refused(browser, provider):
    login, password = _person(provider, "bi-viewers")
    callback = sign_in_at_provider(browser, login, password)
    assert browser.get(callback).status_code == 302
    assert_error(browser.get(callback), 401, "SSO_FAILED")


def test_a_forged_state_is_refused_and_creates_nothing(browser, provider, sql):
    login, password = _person(provider, "bi-admins")
    callback = urlsplit(sign_in_at_provider(browser, login, password))
    code = parse_qs(callback.query)["code"][0]
    forged = browser.get(callback.path, params={"code": code, "state": "forged-" + "x" * 40})
    assert_error(forged, 401, "SSO_FAILED")
    assert _users_with_subject(sql, login) == 0


def test_a_state_brought_by_another_browser_is_refused(browser, provider, oidc_backend, sql):
    login, password = _person(provider, "bi-admins")
    callback = sign_in_at_provider(browser, login, password)
    with httpx.Client(base_url=oidc_backend, timeout=30) as attacker_victim:
        assert_error(attacker_victim.get(callback), 401, "SSO_FAILED")
    # and the state is spent: the browser that started it cannot use it afterwards either
    assert_error(browser.get(callback), 401, "SSO_FAILED")
    assert _users_with_subject(sql, login) == 0


@pytest.mark.parametrize("mode", ["foreign_key", "wrong_aud", "wrong_nonce", "expired"])
def test_a_forged_id_token_is_refused_and_creates_nothing(browser, provider, sql, mode):
    login, password = _person(provider, "bi-admins")
    provider.mischief(mode)
    response = browser.get(sign_in_at_provider(browser, login, password))
    error = assert_error(response, 401, "SSO_FAILED")
    assert "login_code" not in response.headers.get("location", "")
    assert error["details"]["reason"].startswith("id_token:")
    assert _users_with_subject(sql, login) == 0


def test_a_person_in_no_mapped_group_comes_back_with_no_role_and_no_code(browser, provider, sql):
    login, password = _person(provider, "lunch-club")
    response = browser.get(sign_in_at_provider(browser, login, password, "/chat"))
    assert response.status_code == 302
    assert response.headers["location"] == "/chat#error=NO_ROLE"
    assert _users_with_subject(sql, login) == 0
    [audit] = audit_rows(sql, action="auth.login", actor_username=f"{login}.name")
    assert audit["details"] == {"source": "oidc", "reason": "no_role"}


def test_leaving_a_group_lowers_the_role_at_the_next_sign_in(browser, provider):
    login, password = _person(provider, "bi-admins", "bi-viewers")
    first = sign_in(browser, login, password)
    assert first["user"]["roles"] == ["admin"]
    provider.set_person(login, password, ["bi-viewers"])
    second = sign_in(browser, login, password)
    assert (second["user"]["id"], second["user"]["roles"]) == (first["user"]["id"], ["viewer"])


@pytest.mark.parametrize(
    "next_path",
    [
        "//evil.example/x",
        "https://evil.example/",
        "/\\evil.example",
        "\\\\evil.example",
        "javascript:alert(1)",
        "/%0d%0aLocation:%20https://evil.example",
        "",
        None,
    ],
)
def test_next_is_a_path_of_this_site_only(browser, provider, next_path):
    login, password = _person(provider, "bi-viewers")
    response = browser.get(sign_in_at_provider(browser, login, password, next_path))
    location = response.headers["location"]
    assert location.startswith("/#login_code=") or location.startswith("/%0d%0a"), location
    assert "evil" not in urlsplit(location).netloc and not location.startswith("//")


def test_a_provider_person_never_takes_over_a_local_account_of_the_same_name(
    browser, provider, as_user, sql
):
    name = f"dup_{uuid.uuid4().hex[:8]}"
    local = browser.post(
        "/api/admin/users",
        json={"username": name, "password": f"local-{uuid.uuid4().hex}", "roles": ["viewer"]},
        headers=as_user["admin"],
    ).json()
    provider.set_person(name, "op-pass-1", ["bi-admins"])
    body = sign_in(browser, name, "op-pass-1")
    assert body["user"]["id"] != local["id"]
    assert body["user"]["username"] != name and body["user"]["username"].startswith(name)
    assert body["user"]["roles"] == ["admin"]
    roles = scalar(sql, "SELECT roles FROM users WHERE id = %s", local["id"])
    assert roles == ["viewer"]


def test_no_secret_code_or_token_reaches_the_log_an_answer_or_an_audit_row(
    browser, provider, folder, sql
):
    login, password = _person(provider, "bi-viewers")
    callback = sign_in_at_provider(browser, login, password)
    code = parse_qs(urlsplit(callback).query)["code"][0]
    location = browser.get(callback).headers["location"]
    login_code = fragment(location)["login_code"]
    token = browser.post(EXCHANGE, json={"login_code": login_code}).json()["access_token"]
    log = (folder / "backend.log").read_text(errors="replace")
    audits = scalar(sql, "SELECT coalesce(string_agg(details::text, ''), '') FROM assistant_audit")
    for secret in (oidc_provider.CLIENT_SECRET, code, login_code, token):
        assert secret not in log and secret not in audits
    assert oidc_provider.CLIENT_SECRET not in browser.get("/api/auth/providers").text
    assert "/api/auth/oidc/callback?[redacted]" in log
