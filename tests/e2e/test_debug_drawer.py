"""The debug drawer: under an answer, "Debug" opens the turn's model calls (messages sent,
parameters, tools, usage, duration), copyable as JSON, live and after a reload; axe-clean."""

from __future__ import annotations

import json

from playwright.sync_api import Browser, expect

from tests.e2e.checks import DESKTOP, axe_findings, new_context
from tests.e2e.conftest import Watch, login, screenshot, send
from tests.fakes.llm_server import FakeLLM


def test_the_debug_drawer_shows_each_model_call_of_the_answer(
    browser: Browser, gateway: str, watch: Watch, llm: FakeLLM
) -> None:
    llm.enqueue(
        {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}]},
        {"text": "Dashboard 42 is the Sales overview."},
    )
    context = new_context(browser, gateway, DESKTOP)
    page = context.new_page()
    page.on("console", watch.on_console)
    login(page)
    page.goto("/chat")
    page.get_by_test_id("new-conversation").click()
    expect(page.get_by_test_id("resource-panel")).to_be_visible()
    expect(page.get_by_test_id("composer")).to_be_editable()
    send(page, "Show dashboard 42")
    expect(page.get_by_test_id("assistant-message")).to_have_text(
        "Dashboard 42 is the Sales overview."
    )

    opener = page.get_by_test_id("debug-open")
    expect(opener).to_have_count(1)  # one per turn, under its last message
    opener.click()
    drawer = page.get_by_test_id("debug-drawer")
    expect(drawer).to_be_visible()
    calls = drawer.get_by_test_id("debug-call")
    expect(calls).to_have_count(2)
    expect(calls.nth(0)).to_contain_text("gpt-4o-mini")
    expect(calls.nth(0).get_by_test_id("debug-usage")).to_contain_text("Tokens:")
    expect(calls.nth(0).get_by_test_id("debug-duration")).to_contain_text("ms")
    expect(calls.nth(1).get_by_test_id("debug-response")).to_have_text(
        "Dashboard 42 is the Sales overview."
    )
    messages = calls.nth(0).get_by_test_id("debug-messages")
    messages.locator("summary").first.click()
    sent = messages.get_by_test_id("debug-message")
    expect(sent).to_have_count(len(llm.requests[0]["messages"]))
    sent.last.locator("summary").click()
    expect(sent.last).to_contain_text("Show dashboard 42")
    calls.nth(0).get_by_test_id("debug-tools").locator("summary").first.click()
    expect(calls.nth(0).get_by_test_id("debug-tools")).to_contain_text("get_dashboard")
    findings = axe_findings(page)
    assert findings == [], findings
    screenshot(page, "debug-drawer")

    drawer.get_by_test_id("debug-copy").click()
    copied = json.loads(page.evaluate("navigator.clipboard.readText()"))
    assert [c["request"]["messages"] for c in copied["calls"]] == [
        r["messages"] for r in llm.requests
    ]
    page.keyboard.press("Escape")
    expect(drawer).to_have_count(0)

    page.reload()  # the history gives the assistant row's id back
    expect(page.get_by_test_id("assistant-message")).to_be_visible()
    page.get_by_test_id("debug-open").click()
    expect(page.get_by_test_id("debug-drawer").get_by_test_id("debug-call")).to_have_count(2)
    context.close()
