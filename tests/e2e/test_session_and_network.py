"""An ended session and a dropped connection, as the person experiences them."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import login, open_chat, screenshot, send
from tests.fakes.llm_server import FakeLLM

SPOIL_TOKEN = """() => {
  const key = "agent-chat.session";
  const session = JSON.parse(localStorage.getItem(key));
  session.token = "not-a-valid-token";
  localStorage.setItem(key, JSON.stringify(session));
}"""


def test_a_rejected_token_sends_the_person_back_to_the_login_page(page: Page) -> None:
    login(page)
    page.evaluate(SPOIL_TOKEN)
    page.goto("/dashboards/42")
    expect(page.get_by_role("alert")).to_have_text("Your session has ended. Please sign in again.")
    expect(page).to_have_url("/login")
    login(page)
    expect(page).to_have_url("/dashboards/42")  # back where the person was going


def test_a_dropped_connection_offers_a_retry(page: Page, llm: FakeLLM) -> None:
    llm.enqueue({"text": " ".join(["slow"] * 80), "delay_ms": 80}, {"text": "Second try."})
    login(page)
    open_chat(page)
    send(page, "Tell me slowly")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("slow")

    page.context.set_offline(True)
    banner = page.get_by_test_id("banner")
    expect(banner).to_have_attribute("data-kind", "disconnected")
    expect(banner).to_contain_text("The connection was lost")
    screenshot(page, "connection-lost")

    page.context.set_offline(False)
    page.get_by_test_id("retry").click()
    expect(page.get_by_test_id("assistant-message").last).to_have_text("Second try.")
    expect(banner).to_have_count(0)
