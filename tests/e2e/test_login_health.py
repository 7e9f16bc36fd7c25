"""The login page tells a wrong password from a service it cannot reach (CONTRACT.md,
"Operations: metrics, traces, logs"; docs/operations.md, "Health")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.gateway import run_gateway
from tests.support.processes import free_port


@pytest.fixture()
def stopped_backends(browser: Browser, frontend_dist: Path, tmp_path: Path) -> Iterator[Page]:
    """The real gateway and client before backends and agents that are not running: nginx
    answers 502 for every /api/ request, as it does before `up`'s processes accept."""
    dead = [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]
    with run_gateway(tmp_path, backend=dead, agent=dead, static_root=frontend_dist) as url:
        context = browser.new_context(base_url=url, locale="en-US")
        context.set_default_timeout(30_000)
        yield context.new_page()
        context.close()


def _sign_in(page: Page, password: str) -> None:
    page.goto("/login")
    page.get_by_label("Username").fill("admin")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_with_the_backends_stopped_the_login_says_the_service_is_unreachable(
    stopped_backends: Page,
) -> None:
    _sign_in(stopped_backends, "any-password")
    alert = stopped_backends.get_by_role("alert")
    expect(alert).to_have_text(
        "The service is unreachable right now. Your password was not checked; "
        "try again in a moment."
    )
    expect(stopped_backends).to_have_url("/login")


def test_a_wrong_password_is_still_called_wrong(page: Page) -> None:
    _sign_in(page, "not-the-password")
    expect(page.get_by_role("alert")).to_have_text("Wrong username or password.")
