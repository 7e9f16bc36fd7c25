"""In the browser, a person who does not sign in through the directory connects their own
Superset account by hand (SUPERSET__IDENTITY=person): the refusal they meet points to the
page, a wrong password is said there and signs nobody out, the right one shows what their
Superset lets them see, and signing out forgets the session (real nginx, the built client,
Debian's chromium, real AUTH_LDAP Supersets)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.conftest import PASSWORDS, bearer
from tests.conftest import login as api_login
from tests.e2e.browser import chromium_page, client_gateway
from tests.e2e.conftest import login
from tests.superset_person.conftest import ALLOWED, HIDDEN, Stack

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def page(
    person_stack: Stack, person_agent: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Page]:
    prefix = tmp_path_factory.mktemp("person-nginx")
    backend, agent = person_stack.backend, person_agent
    with (
        client_gateway(prefix, backend_url=backend, agent_url=agent) as url,
        chromium_page(url) as tab,
    ):
        yield tab


def _staging_session(api: httpx.Client) -> dict[str, object]:
    admin = bearer(api_login(api, "admin", PASSWORDS["admin"]))
    state = api.get("/api/superset/session", headers=admin).json()
    return dict(state["environments"]["staging"])


def test_a_local_account_connects_its_superset_by_hand_and_signing_out_forgets_it(
    page: Page, api: httpx.Client, person_stack: Stack, synced: None
) -> None:
    carl = person_stack.people["carl"]
    login(page, "admin")  # a local account: no Superset session opened at its sign-in
    expect(page.get_by_role("alert")).to_be_visible()
    hint = page.get_by_test_id("superset-login-hint")
    expect(hint).to_contain_text("not connected")
    expect(page.get_by_test_id("superset-link")).to_be_visible()  # the refusal shows the way
    hint.get_by_test_id("superset-connect-link").click()

    expect(page).to_have_url(re.compile(r"/superset$"))
    staging = page.locator('[data-testid="superset-environment"][data-environment="staging"]')
    expect(staging).to_have_attribute("data-connected", "false")
    staging.get_by_test_id("superset-username").fill(carl.username)
    staging.get_by_test_id("superset-password").fill("not-his-password")
    staging.get_by_test_id("superset-connect").click()
    expect(page.get_by_test_id("superset-problem")).to_contain_text("refused")
    expect(page.get_by_test_id("user")).to_have_text("admin")  # a refusal is no sign-out
    expect(staging.get_by_test_id("superset-password")).to_have_value("")  # not kept
    assert _staging_session(api)["connected"] is False

    staging.get_by_test_id("superset-password").fill(carl.password)
    staging.get_by_test_id("superset-connect").click()
    expect(staging.get_by_test_id("superset-connected")).to_have_text(
        f"Connected as {carl.username}"
    )
    assert _staging_session(api) == {"connected": True, "username": carl.username}

    page.get_by_role("link", name="Dashboards").click()  # now what carl's Superset shows
    links = page.get_by_test_id("dashboard-link")
    expect(links).to_have_count(1)
    expect(links.first).to_contain_text(ALLOWED)
    expect(page.get_by_text(HIDDEN)).to_have_count(0)

    page.get_by_test_id("sign-out").click()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    assert _staging_session(api) == {"connected": False, "username": None}
