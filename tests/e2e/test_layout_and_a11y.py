"""The layout on a phone (390 px) and axe-core's accessibility rules on the main screens."""

from __future__ import annotations

from playwright.sync_api import Browser, Page, expect

from tests.e2e.checks import PHONE, axe_findings, horizontal_overflow, new_context
from tests.e2e.conftest import Watch, login, open_chat, screenshot, send, width_of
from tests.fakes.llm_server import FakeLLM

DEPLOY = {
    "name": "deploy_dashboard",
    "args": {"dashboard_id": 42, "ref": "main", "environment": "staging"},
}
SQL = {
    "name": "execute_sql",
    "args": {
        "datasource": "sample",
        "query": "SELECT category, COUNT(*) AS products FROM products GROUP BY category",
    },
}


def test_on_a_phone_the_top_bar_is_a_menu_and_the_drawer_is_the_whole_screen(
    browser: Browser, gateway: str, watch: Watch, llm: FakeLLM
) -> None:
    llm.enqueue({"tool_calls": [SQL]}, {"text": "Products per category are above."})
    context = new_context(browser, gateway, PHONE)
    page = context.new_page()
    page.on("console", watch.on_console)
    login(page)
    expect(page.get_by_role("heading", name="Dashboards")).to_be_visible()
    assert horizontal_overflow(page) <= 0
    links = page.get_by_test_id("full-page-link")
    expect(links).to_be_hidden()
    page.get_by_test_id("menu-toggle").click()
    expect(links).to_be_visible()
    expect(page.get_by_test_id("user")).to_have_text("admin")
    screenshot(page, "phone-menu-390")
    page.keyboard.press("Escape")
    expect(links).to_be_hidden()

    page.get_by_test_id("dashboard-link").filter(has_text="Sales overview").click()
    expect(page.locator('[data-testid="chart"][data-state="drawn"]')).to_have_count(4)
    assert horizontal_overflow(page) <= 0

    open_chat(page)
    drawer = page.locator("#assistant-drawer")
    box = drawer.bounding_box()
    assert box is not None and (box["x"], box["y"]) == (0, 0)
    assert (box["width"], box["height"]) == (PHONE["width"], PHONE["height"])
    send(page, "How many products per category?")
    expect(page.get_by_test_id("sql-result")).to_be_visible()
    expect(page.get_by_test_id("assistant-message")).to_contain_text("above")
    expect(page.get_by_test_id("send")).to_be_visible()
    send_button = page.get_by_test_id("send")
    expect(send_button).to_be_in_viewport(ratio=1)
    assert horizontal_overflow(page) <= 0
    screenshot(page, "phone-drawer-390")

    page.get_by_test_id("drawer-back").click()
    expect(drawer).to_be_hidden()
    expect(page.get_by_test_id("assistant-toggle")).to_be_focused()

    page.goto("/chat")
    page.get_by_test_id("composer").wait_for()
    screenshot(page, "phone-full-page-chat-390")
    assert horizontal_overflow(page) <= 0
    context.close()
    assert watch.csp_violations() == []


def clean(page: Page, where: str) -> None:
    findings = axe_findings(page)
    assert findings == [], f"{where}: {findings}"


def test_axe_finds_nothing_serious_on_login_dashboards_a_dashboard_and_the_chat(
    sized_page: Page, llm: FakeLLM
) -> None:
    page = sized_page
    llm.enqueue(
        {
            "tool_calls": [
                SQL,
                {"name": "dashboard_health", "args": {"dashboard_id": 17}},
                {"name": "read_file", "args": {"key": "exports/sales_2026_10.csv"}},
                {"name": "get_dashboard", "args": {"dashboard_id": 999999}},
            ]
        },
        {"text": "Here is what I found. Shall I deploy?"},
        {"tool_calls": [DEPLOY]},
    )
    page.goto("/login")
    page.get_by_label("Username").wait_for()
    clean(page, "login")

    login(page)
    page.get_by_test_id("dashboard-link").first.wait_for()
    clean(page, "dashboard list")

    page.goto("/dashboards/42")
    expect(page.locator('[data-testid="chart"][data-state="drawn"]')).to_have_count(4)
    clean(page, "dashboard 42")
    page.goto("/dashboards/17")
    expect(page.get_by_test_id("chart-error")).to_have_count(1)
    clean(page, "dashboard 17")

    open_chat(page)
    send(page, "Look at the products, dashboard 17 and the October export")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("Shall I deploy?")
    expect(page.get_by_test_id("send")).to_be_visible()
    expect(page.get_by_test_id("tool-card")).to_have_count(4)
    page.locator('[data-testid="tool-card"][data-tool="execute_sql"] button.head').click()
    page.get_by_test_id("view-chart").click()
    expect(page.get_by_test_id("sql-result").get_by_test_id("chart")).to_have_attribute(
        "data-state", "drawn"
    )
    send(page, "Deploy dashboard 42 to staging")
    expect(page.get_by_test_id("confirm-card")).to_have_attribute("data-active", "true")
    clean(page, "chat with tool cards and a confirmation")
    screenshot(page, f"axe-chat-{width_of(page)}")
