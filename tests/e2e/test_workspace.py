"""The full-page chat as a data workspace: three columns, files and tables picked in the
resource panel (badges, then the answer with them in the model's context), a workflow's step
timeline, and the panel folding away on narrower screens."""

from __future__ import annotations

import json

from playwright.sync_api import Browser, Page, expect

from tests.conftest import PASSWORDS
from tests.e2e.conftest import login, screenshot, send
from tests.fakes.llm_server import FakeLLM

CSV = "exports/sales_2026_10.csv"


def open_workspace(page: Page) -> None:
    login(page)
    page.goto("/chat")
    page.get_by_test_id("new-conversation").click()
    expect(page.get_by_test_id("resource-panel")).to_be_visible()


def test_selecting_a_file_and_a_table_adds_badges_and_the_answer_uses_them(
    page: Page, llm: FakeLLM
) -> None:
    llm.enqueue({"text": "The October file and the orders table agree."})
    open_workspace(page)
    expect(page.get_by_test_id("conversation-list")).to_be_visible()  # left column

    page.get_by_test_id("storage-folder").filter(has_text="exports").click()
    page.locator(f'[data-testid="storage-file"][data-key="{CSV}"] input').check()
    page.get_by_test_id("resource-tab-datasources").click()
    page.locator('[data-testid="datasource"][data-name="sample"]').click()
    table = page.locator('[data-testid="datasource-table"][data-ref="sample.orders"]')
    table.get_by_role("button").click()
    expect(page.get_by_test_id("table-columns")).to_contain_text("total_amount")
    table.get_by_role("checkbox").check()

    badges = page.get_by_test_id("context-badge")
    expect(badges).to_have_count(2)
    expect(badges.nth(0)).to_have_attribute("data-ref", CSV)
    expect(badges.nth(1)).to_have_attribute("data-ref", "sample.orders")
    screenshot(page, "workspace-selected")
    send(page, "Do the file and the table agree?")

    expect(page.get_by_test_id("assistant-message")).to_have_text(
        "The October file and the orders table agree."
    )
    expect(page.get_by_test_id("context-badge")).to_have_count(0)  # the next message starts clean
    sent = json.dumps(llm.requests[0]["messages"])
    assert f'ref=\\"{CSV}\\"' in sent and "order_id,order_date,region" in sent
    assert 'ref=\\"sample.orders\\"' in sent and "total_amount REAL" in sent
    on_message = page.get_by_test_id("message-resource")
    expect(on_message).to_have_count(2)

    page.reload()
    expect(page.get_by_test_id("message-resource")).to_have_count(2)  # from metadata.resources
    expect(page.locator(f'[data-testid="message-resource"][data-ref="{CSV}"]')).to_have_attribute(
        "data-status", "included"
    )
    screenshot(page, "workspace-answer")


def test_a_workflow_runs_as_a_step_timeline(page: Page, llm: FakeLLM) -> None:
    llm.enqueue({"text": "Orders placed by customers; id is the key.", "delay_ms": 30})
    open_workspace(page)
    page.get_by_test_id("resource-tab-workflows").click()
    definition = page.locator('[data-testid="workflow-definition"][data-name="explore_table"]')
    expect(definition).to_contain_text("Describe a table")
    definition.get_by_test_id("use-workflow").click()
    expect(page.get_by_test_id("mode-picker")).to_have_value("yaml")
    expect(page.get_by_test_id("workflow-badge")).to_contain_text("explore_table")

    send(page, "Tell me about sample.orders")

    steps = page.get_by_test_id("workflow-step")
    expect(steps).to_have_count(3)
    for name in ("schema", "sample", "summary"):
        expect(
            page.locator(f'[data-testid="workflow-step"][data-name="{name}"]')
        ).to_have_attribute("data-status", "completed")
    expect(steps.locator(".icon.ok")).to_have_count(3)
    expect(page.locator('[data-step-type="llm_call"]')).to_have_count(1)
    expect(page.locator('[data-step-type="tool_call"]')).to_have_count(2)
    expect(page.get_by_test_id("assistant-message")).to_contain_text("Table sample.orders")
    page.locator('[data-testid="workflow-step"][data-name="schema"] button').click()
    expect(page.get_by_test_id("workflow-step-details")).to_contain_text("customer_id")
    run = page.get_by_test_id("workflow-execution")
    expect(run).to_have_attribute("data-status", "completed")
    screenshot(page, "workflow-timeline")


def test_a_failing_workflow_step_shows_a_cross_and_its_error(page: Page, llm: FakeLLM) -> None:
    open_workspace(page)
    page.get_by_test_id("mode-picker").select_option("yaml")
    send(page, "Check dashboard 999999 before deploy")

    failed = page.locator('[data-testid="workflow-step"][data-status="failed"]')
    expect(failed.locator(".icon.fail")).to_have_text("✗")
    failed.get_by_role("button").click()
    expect(failed.get_by_test_id("workflow-step-details")).to_contain_text("NOT_FOUND")
    expect(page.locator('[data-testid="error"][data-code="WORKFLOW_FAILED"]')).to_be_visible()
    assert llm.requests == []


def test_the_resource_panel_folds_away_below_tablet_width_and_nothing_overflows(
    browser: Browser, gateway: str
) -> None:
    for width, height in ((900, 1000), (375, 740)):
        context = browser.new_context(base_url=gateway, viewport={"width": width, "height": height})
        page = context.new_page()
        page.goto("/login")
        page.get_by_label("Username").fill("viewer")
        page.get_by_label("Password").fill(PASSWORDS["viewer"])
        page.get_by_role("button", name="Sign in").click()
        page.get_by_test_id("user").wait_for(state="attached")  # in the menu on a phone
        page.goto("/chat")
        toggle = page.get_by_test_id("resources-toggle")
        expect(toggle).to_have_attribute("aria-expanded", "false")
        expect(page.get_by_test_id("resource-panel")).to_have_count(0)
        toggle.click()
        panel = page.get_by_test_id("resource-panel")
        expect(panel).to_be_visible()
        assert panel.evaluate("el => getComputedStyle(el.parentElement).position") == "absolute"
        box = panel.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        # The chat's own columns fit (the top bar at phone width is issue 12's).
        overflow = page.evaluate(
            "(() => { const c = document.querySelector('[data-testid=chat-embedded]');"
            " return c.scrollWidth - window.innerWidth; })()"
        )
        assert overflow <= 0, f"{width}px: {overflow}px of horizontal overflow"
        screenshot(page, f"workspace-{width}")
        page.keyboard.press("Escape")
        expect(page.get_by_test_id("resource-panel")).to_have_count(0)
        context.close()
