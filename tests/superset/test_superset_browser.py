"""The browser shows a Superset dashboard like any other: its charts drawn from Superset's chart
data, the failing one with Superset's message, a link to it in each environment's Superset and
the version each environment serves (real nginx, the built client, Debian's chromium)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.browser import chromium_page, client_gateway
from tests.e2e.conftest import login
from tests.superset.conftest import Backend, Stack
from tests.support.superset_build import BROKEN, GOOD

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def gateway(
    ss_backend: Backend, ss_agent: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    prefix = tmp_path_factory.mktemp("ss-nginx")
    with client_gateway(prefix, backend_url=ss_backend.url, agent_url=ss_agent) as url:
        yield url


@pytest.fixture(scope="module")
def page(gateway: str) -> Iterator[Page]:
    with chromium_page(gateway) as tab:
        yield tab


def test_a_superset_dashboard_draws_its_charts_and_links_to_each_superset(
    page: Page, synced: dict[str, int], superset_stack: Stack
) -> None:
    login(page, "viewer")
    page.goto(f"/dashboards/{synced[GOOD.title]}")
    cards = page.get_by_test_id("dashboard-chart")
    expect(cards).to_have_count(len(GOOD.charts))
    for card in cards.all():  # a table chart is drawn as a table
        expect(card.get_by_test_id("chart")).to_have_attribute(
            "data-state", re.compile("^(drawn|table)$")
        )
    first = cards.first.get_by_test_id("chart")
    expect(first).to_contain_text("Rows: 3")  # staging's three regions, from Superset
    staging = page.locator('[data-testid="environments"] li[data-environment="staging"]')
    link = staging.get_by_test_id("superset-link")
    expect(link).to_have_attribute(
        "href",
        f"{superset_stack.staging.url}/superset/dashboard/{superset_stack.staging_ids[GOOD.slug]}/",
    )
    expect(staging).to_contain_text("version")


def test_the_failing_superset_chart_shows_supersets_message(
    page: Page, synced: dict[str, int]
) -> None:
    page.goto(f"/dashboards/{synced[BROKEN.title]}")
    broken = page.locator('[data-testid="dashboard-chart"][data-state="error"]')
    expect(broken).to_have_count(1)
    error = broken.get_by_test_id("chart-error")
    expect(error).to_have_attribute("data-code", "SUPERSET_CHART_ERROR")
    expect(error).to_contain_text("discount")
    production = page.locator('[data-testid="environments"] li[data-environment="production"]')
    expect(production).to_contain_text("not deployed")
