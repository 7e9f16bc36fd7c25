"""Stopping a long answer, and the assistant knowing which dashboard is open."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import login, open_chat, screenshot, send
from tests.fakes.llm_server import FakeLLM


def test_stopping_a_long_answer_keeps_its_partial_text(page: Page, llm: FakeLLM) -> None:
    llm.enqueue({"tokens": 400, "delay_ms": 40})
    login(page)
    open_chat(page)
    send(page, "Write a very long report")

    answer = page.get_by_test_id("assistant-message")
    expect(answer).to_contain_text("t10 ")
    page.get_by_test_id("stop").click()
    expect(page.get_by_test_id("stopped")).to_be_visible()
    expect(page.get_by_test_id("send")).to_be_visible()
    partial = answer.inner_text()
    page.wait_for_timeout(400)
    assert answer.inner_text() == partial  # nothing more arrives after Stop
    assert "t399" not in partial
    screenshot(page, "stopped")

    page.reload()  # the partial answer was kept in the history too
    expect(page.get_by_test_id("assistant-message")).to_contain_text("t10 ")


def test_the_agent_is_told_which_dashboard_is_open(page: Page, llm: FakeLLM) -> None:
    llm.enqueue({"text": "That is the Sales overview."})
    login(page)
    page.get_by_test_id("dashboard-link").filter(has_text="Sales overview").click()
    expect(page.get_by_test_id("dashboard")).to_have_attribute("data-dashboard-id", "42")
    open_chat(page)
    expect(page.get_by_test_id("focus-chip")).to_contain_text("#42 Sales overview")
    send(page, "What am I looking at?")
    expect(page.get_by_test_id("assistant-message")).to_have_text("That is the Sales overview.")
    screenshot(page, "dashboard-with-drawer")

    system = llm.requests[0]["messages"][0]
    assert system["role"] == "system"
    assert '"id": 42' in system["content"]
    assert "Sales overview" in system["content"]
