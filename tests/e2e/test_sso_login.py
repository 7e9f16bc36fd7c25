"""Sign-in through the organisation in a browser: "Sign in with <name>" leads through the
provider's own login page (the npm `oidc-provider` on Node 20) back into the app, signed in,
behind the real nginx gateway; the admin's People page shows where each person comes from."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.conftest import PASSWORDS
from tests.e2e.checks import PHONE, horizontal_overflow
from tests.e2e.gateway import run_gateway
from tests.support import oidc_provider
from tests.support.processes import free_port, serve

ROLE_MAP = {"bi-admins": "admin", "bi-viewers": "viewer"}


@pytest.fixture(scope="module")
def sso_stack(
    seeded: dict[str, str],
    agent_url: str,
    frontend_dist: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, oidc_provider.Provider, Path]]:
    """A backend with the provider configured, the gateway before it, then the provider (it
    must know the gateway's callback address)."""
    folder = tmp_path_factory.mktemp("sso-e2e")
    issuer_port = free_port()
    env = {
        **seeded,
        "OIDC__ISSUER": f"http://127.0.0.1:{issuer_port}",
        "OIDC__CLIENT_ID": oidc_provider.CLIENT_ID,
        "OIDC__CLIENT_SECRET": oidc_provider.CLIENT_SECRET,
        "OIDC__NAME": "Example SSO",
        "AUTH__ROLE_MAP": json.dumps(ROLE_MAP),
    }
    with (
        serve(["backend"], env, health_path="/readyz", log_path=folder / "backend.log") as (
            backend,
            _,
        ),
        run_gateway(
            folder / "nginx",
            backend=urlsplit(backend).netloc,
            agent=urlsplit(agent_url).netloc,
            static_root=frontend_dist,
        ) as gateway,
        oidc_provider.running_provider(
            folder, port=issuer_port, redirect_uris=[f"{gateway}/api/auth/oidc/callback"]
        ) as provider,
    ):
        yield gateway, provider, folder


@pytest.fixture()
def sso_page(
    browser: Browser, sso_stack: tuple[str, oidc_provider.Provider, Path]
) -> Iterator[Page]:
    context = browser.new_context(base_url=sso_stack[0], locale="en-US")
    context.set_default_timeout(20_000)
    yield context.new_page()
    context.close()


def _person(provider: oidc_provider.Provider, *groups: str) -> tuple[str, str]:
    login, password = f"sso_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex}"
    provider.set_person(login, password, list(groups))
    return login, password


def _through_the_provider(page: Page, login: str, password: str) -> None:
    page.goto("/login")
    button = page.get_by_role("link", name="Sign in with Example SSO")
    expect(button).to_be_visible()
    button.focus()
    page.keyboard.press("Enter")  # a keyboard gets there as well as a mouse
    expect(page.get_by_role("heading", name="Test provider")).to_be_visible()
    page.get_by_label("Login").fill(login)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in at the provider").click()


def test_sign_in_with_the_provider_leads_back_into_the_app_signed_in(sso_page, sso_stack):
    login, password = _person(sso_stack[1], "bi-admins")
    _through_the_provider(sso_page, login, password)
    expect(sso_page.get_by_test_id("user")).to_have_text(login)
    assert "login_code" not in sso_page.url  # the one-time code left the address bar
    assert urlsplit(sso_page.url).netloc == urlsplit(sso_stack[0]).netloc

    sso_page.get_by_test_id("users-link").click()
    row = sso_page.locator(f'[data-testid="user-row"][data-username="{login}"]')
    expect(row).to_have_attribute("data-source", "oidc")
    expect(row).to_contain_text("OpenID provider")
    expect(sso_page.locator('[data-testid="user-row"][data-username="admin"]')).to_contain_text(
        "local"
    )
    # the gateway's access log has the callback, without its code and state
    callbacks = [
        line
        for line in (sso_stack[2] / "nginx" / "access.log").read_text().splitlines()
        if "/api/auth/oidc/callback" in line
    ]
    assert callbacks and all("/api/auth/oidc/callback?[redacted]" in c for c in callbacks)
    assert not any("code=" in c or "state=" in c for c in callbacks)


def test_a_person_in_no_mapped_group_is_told_so_on_the_login_page(sso_page, sso_stack):
    login, password = _person(sso_stack[1], "lunch-club")
    _through_the_provider(sso_page, login, password)
    expect(sso_page.get_by_test_id("sso-problem")).to_contain_text("no group that has access")
    expect(sso_page).to_have_url("/login")


def test_the_login_page_offers_both_ways_in_russian_at_phone_width(browser, sso_stack):
    context = browser.new_context(base_url=sso_stack[0], locale="ru-RU", viewport=PHONE)
    page = context.new_page()
    page.goto("/login")
    expect(page.get_by_role("link", name="Войти через Example SSO")).to_be_visible()
    expect(page.get_by_label("Пароль")).to_be_visible()
    assert horizontal_overflow(page) == 0
    context.close()


def test_the_password_form_still_signs_in_beside_the_button(sso_page):
    sso_page.goto("/login")
    sso_page.get_by_label("Username").fill("admin")
    sso_page.get_by_label("Password").fill(PASSWORDS["admin"])
    sso_page.get_by_role("button", name="Sign in", exact=True).click()
    expect(sso_page.get_by_test_id("user")).to_have_text("admin")
