"""Schedules in the browser: a person creates a health sweep (the next three firings shown while
typing), runs it now, and finds its answer in the schedule's conversation; at phone width too.
A backend running the schedules' worker (beside the gateway's) fires it on the same database."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.conftest import bearer
from tests.e2e.checks import DESKTOP, PHONE, new_context
from tests.e2e.conftest import Watch, screenshot
from tests.e2e.test_usage import sign_in
from tests.support.processes import serve


@pytest.fixture(scope="module")
def worker(seeded, agent_url, tmp_path_factory) -> Iterator[str]:
    env = {
        **seeded,
        "SCHEDULES__ENABLED": "true",
        "SCHEDULES__AGENT_URL": agent_url,
        "SCHEDULES__TICK_S": "1",
    }
    log = tmp_path_factory.mktemp("e2e-schedules") / "backend.log"
    with serve(["backend"], env, health_path="/readyz", log_path=log) as (base, _proc):
        yield base


@pytest.mark.timeout(540)  # run alone it may be the first browser test: a build and every process
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1400px", "390px"])
def test_a_person_creates_a_sweep_runs_it_and_reads_its_answer(
    browser: Browser, gateway: str, worker: str, watch: Watch, api: httpx.Client, tokens, viewport
) -> None:
    username, password = f"sched_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex}"
    created = api.post(
        "/api/admin/users",
        json={"username": username, "password": password, "roles": ["editor"]},
        headers=bearer(tokens["admin"]),
    )
    assert created.status_code == 201, created.text
    page = new_context(browser, gateway, viewport).new_page()
    page.on("console", watch.on_console)
    sign_in(page, username, password)
    page.goto("/schedules")

    page.get_by_test_id("schedule-name").fill("Morning sweep")
    page.get_by_test_id("schedule-kind").select_option("sweep")
    page.get_by_test_id("schedule-environment").select_option("production")
    page.get_by_test_id("schedule-cron").fill("30 7 * * 1-5")
    page.get_by_test_id("schedule-timezone").fill("Europe/Berlin")
    expect(page.get_by_test_id("schedule-next").locator("span")).to_have_count(3)
    page.get_by_test_id("schedule-create").click()
    row = page.get_by_test_id("schedule-row").filter(has_text="Morning sweep")
    expect(row).to_have_count(1)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"] + 1, width  # nothing wider than the screen

    row.get_by_test_id("schedule-run").click()
    expect(row.get_by_test_id("schedule-run-row").first).to_have_attribute(
        "data-status", "ok", timeout=90_000
    )
    screenshot(page, f"schedules-{viewport['width']}")
    row.get_by_test_id("schedule-answer").first.click()
    expect(page.get_by_text("Sweep of production", exact=False).first).to_be_visible(timeout=20_000)
