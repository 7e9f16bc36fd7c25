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


def test_a_dropped_connection_reconnects_and_the_answer_goes_on(page: Page, llm: FakeLLM) -> None:
    words = " ".join(["slow"] * 80)
    llm.enqueue({"text": words, "delay_ms": 80})
    login(page)
    open_chat(page)
    send(page, "Tell me slowly")
    answer = page.get_by_test_id("assistant-message")
    expect(answer).to_contain_text("slow")

    # The run goes on without the page (CONTRACT.md, "Runs outlive the page"): the page says it
    # is reconnecting, not that the connection was lost, and keeps Stop.
    page.context.set_offline(True)
    expect(page.get_by_test_id("reconnecting")).to_be_visible()
    expect(page.get_by_test_id("banner")).to_have_attribute("data-kind", "reattaching")
    expect(page.get_by_test_id("stop")).to_be_visible()
    screenshot(page, "reconnecting")

    page.context.set_offline(False)
    expect(answer).to_have_text(words, timeout=30_000)  # every word once, in order
    expect(page.get_by_test_id("send")).to_be_visible()
    expect(page.get_by_test_id("banner")).to_have_count(0)
    page.reload()
    expect(answer).to_have_text(words)
