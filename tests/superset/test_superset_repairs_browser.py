"""The browser's branch view of a Superset dashboard: the changed chart before (failing) and
after (drawn from staging, running), what changed, and a deploy from there through a
confirmation, audited (real nginx, the built client, Debian's chromium)."""

from __future__ import annotations

import psycopg
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import login
from tests.superset.test_superset_browser import gateway, page  # noqa: F401  (fixtures)
from tests.superset.test_superset_repairs import FIX, _branch, _broken, _commit
from tests.support.superset_build import BROKEN

pytestmark = pytest.mark.timeout(300)


def test_a_branch_shows_the_fixed_chart_before_and_after_and_deploys_from_there(
    page: Page,  # noqa: F811
    ss_api,
    ss_as,
    synced: dict[str, int],
    ss_database_url: str,
) -> None:
    dashboard_id = synced[BROKEN.title]
    failing = _broken(ss_api, ss_as["viewer"], dashboard_id)["Discounts by region"]
    branch_id = _branch(ss_api, ss_as["editor"], dashboard_id, "browser-fix")
    change = {"op": "update", "key": failing["key"], "chart": FIX}
    assert _commit(ss_api, ss_as["editor"], branch_id, [change]).status_code == 201
    login(page, "admin")
    page.goto(f"/dashboards/{dashboard_id}")
    page.get_by_test_id("branches").get_by_role("link", name="browser-fix").click()
    changed = page.get_by_test_id("changed-chart")
    expect(changed).to_have_count(1)
    expect(changed).to_have_attribute("data-chart-key", failing["key"])
    expect(changed.get_by_test_id("changed-fields")).to_contain_text("query")
    before = changed.get_by_test_id("before").get_by_test_id("chart-error")
    expect(before).to_contain_text("discount")
    after = changed.get_by_test_id("after").get_by_test_id("chart")
    expect(after).to_contain_text("Rows: 3")
    expect(changed.get_by_test_id("runs")).to_have_attribute("data-state", "ready")
    page.get_by_test_id("deploy-production").click()
    expect(page.get_by_test_id("deploy-confirm")).to_contain_text("browser-fix")
    page.get_by_test_id("deploy-yes").click()
    expect(page.get_by_test_id("deploy-done")).to_contain_text("production")
    with psycopg.connect(ss_database_url) as conn:
        rows = conn.execute(
            "SELECT actor_username, outcome, details->>'ref' FROM assistant_audit"
            " WHERE action = 'dashboard.deploy' AND resource_id = %s",
            (str(dashboard_id),),
        ).fetchall()
    assert ("admin", "success", "browser-fix") in rows
