"""Tool cards and confirmations as a person sees them in the browser."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import login, open_chat, screenshot, send
from tests.fakes.llm_server import FakeLLM

DEPLOY = {
    "tool_calls": [
        {
            "name": "deploy_dashboard",
            "args": {"dashboard_id": 42, "ref": "main", "environment": "staging"},
        }
    ]
}


def test_tool_cards_turn_into_a_check_and_a_cross_with_expandable_details(
    page: Page, llm: FakeLLM
) -> None:
    llm.enqueue(
        {
            "tool_calls": [
                {"name": "get_dashboard", "args": {"dashboard_id": 42}},
                {"name": "get_dashboard", "args": {"dashboard_id": 999999}},
            ],
            "delay_ms": 20,
        },
        {"text": "Dashboard 42 is fine; 999999 does not exist."},
    )
    login(page)
    open_chat(page)
    send(page, "Compare dashboards 42 and 999999")

    expect(page.get_by_test_id("assistant-message")).to_contain_text("999999 does not exist")
    cards = page.get_by_test_id("tool-card")
    expect(cards).to_have_count(2)
    done = page.locator('[data-testid="tool-card"][data-state="done"]')
    failed = page.locator('[data-testid="tool-card"][data-state="error"]')
    expect(done).to_have_count(1)
    expect(failed).to_have_count(1)
    expect(done.locator(".icon.ok")).to_have_text("✓")
    expect(failed.locator(".icon.fail")).to_have_text("✗")
    expect(done.locator("code")).to_have_text("get_dashboard")
    # A settled card names what the call was, not "Reading the dashboard" any more.
    expect(done.get_by_test_id("tool-title")).to_have_text("Dashboard details")
    expect(failed.get_by_test_id("tool-title")).to_have_text("Dashboard details")

    done.get_by_role("button").click()
    expect(done.get_by_test_id("tool-details")).to_contain_text("Sales overview")
    failed.get_by_role("button").click()
    expect(failed.get_by_test_id("tool-details")).to_contain_text("NOT_FOUND")
    screenshot(page, "tool-cards")


def test_a_confirmation_is_confirmed_and_another_rejected(page: Page, llm: FakeLLM) -> None:
    llm.enqueue(
        DEPLOY, {"text": "Deployed to staging."}, DEPLOY, {"text": "Understood, no deploy."}
    )
    login(page)
    open_chat(page)
    send(page, "Deploy dashboard 42 to staging")

    card = page.get_by_test_id("confirm-card")
    expect(card).to_have_attribute("data-active", "true")
    expect(card).to_contain_text("deploy_dashboard")
    expect(card).to_contain_text('"environment": "staging"')
    expect(page.get_by_test_id("composer")).to_be_disabled()
    screenshot(page, "confirmation-pending")
    card.get_by_test_id("confirm").click()

    expect(page.get_by_test_id("assistant-message").last).to_have_text("Deployed to staging.")
    expect(card.get_by_test_id("decision")).to_have_text("Confirmed")
    deployed = page.locator('[data-testid="tool-card"][data-tool="deploy_dashboard"]')
    expect(deployed).to_have_attribute("data-state", "done")
    screenshot(page, "confirmation-confirmed")

    page.get_by_test_id("new-conversation").click()
    send(page, "Deploy dashboard 42 to staging again")
    second = page.get_by_test_id("confirm-card")
    expect(second).to_have_attribute("data-active", "true")
    second.get_by_test_id("reject").click()
    expect(page.get_by_test_id("assistant-message").last).to_have_text("Understood, no deploy.")
    expect(second.get_by_test_id("decision")).to_have_text("Rejected")
    assert llm.requests[-1]["messages"][-1]["role"] == "tool"  # the model heard the rejection


def test_a_pending_confirmation_survives_a_reload_and_can_still_be_confirmed(
    page: Page, llm: FakeLLM
) -> None:
    llm.enqueue(DEPLOY, {"text": "Deployed after the reload."})
    login(page)
    open_chat(page)
    send(page, "Deploy dashboard 42 to staging")
    expect(page.get_by_test_id("confirm-card")).to_have_attribute("data-active", "true")

    page.reload()
    card = page.get_by_test_id("confirm-card")
    expect(card).to_have_attribute("data-active", "true")
    expect(page.get_by_test_id("user-message")).to_have_text("Deploy dashboard 42 to staging")
    screenshot(page, "confirmation-after-reload")
    card.get_by_test_id("confirm").click()
    expect(page.get_by_test_id("assistant-message").last).to_have_text("Deployed after the reload.")
    page.reload()
    expect(page.get_by_test_id("decision-record")).to_have_attribute("data-decision", "confirm")
    expect(page.get_by_test_id("confirm-card")).to_have_attribute("data-active", "false")
