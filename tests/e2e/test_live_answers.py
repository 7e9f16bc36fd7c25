"""Runs outlive the page (CONTRACT.md): a reload or a second tab follows the answer going on.

The scripted model streams "t0 t1 ... tN", `delay_ms` apart; where a reload must land in the
middle of the answer, it holds the stream after a few words (`hold_after_tokens`) until the page
has come back, so that however slow the machine the answer is still going on behind it.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import login, open_chat, screenshot, send
from tests.fakes.llm_server import FakeLLM

WORDS = 100
FAST = {"tokens": WORDS, "delay_ms": 10}  # the uninterrupted reference: the same words, quickly
# Held after "t20" until the reloaded page follows the run; then the rest arrives (about 4 s).
HELD = 21
SLOW = {"tokens": WORDS, "delay_ms": 50, "hold_after_tokens": HELD}
MID_ANSWER_MS = 15_000  # how long a word in the middle of a slow answer may take to show
TOOL = {"tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}]}
DEPLOY_CALL = {
    "name": "deploy_dashboard",
    "args": {"dashboard_id": 42, "ref": "main", "environment": "staging"},
}
ALL_WORDS = " ".join(f"t{i}" for i in range(WORDS))

# What the thread shows, message by message (durations and buttons left out).
THREAD = """() => [...document.querySelectorAll('[data-testid="messages"] [data-testid]')]
  .filter((e) => ["user-message", "assistant-message", "tool-card", "confirm-card", "error"]
    .includes(e.dataset.testid))
  .map((e) => e.dataset.testid === "tool-card"
    ? `tool-card ${e.dataset.state} ${e.querySelector("code")?.textContent ?? ""}`
    : `${e.dataset.testid} ${e.innerText.trim()}`)"""


def shown(page: Page) -> list[str]:
    return list(page.evaluate(THREAD))


def answered(page: Page) -> None:
    """The turn has ended: the composer takes a message again."""
    expect(page.get_by_test_id("send")).to_be_visible(timeout=30_000)
    expect(page.get_by_test_id("stop")).to_have_count(0)


def test_a_reload_mid_answer_shows_the_rest_arriving_and_ends_as_an_uninterrupted_answer(
    page: Page, llm: FakeLLM
) -> None:
    llm.enqueue(TOOL, FAST, TOOL, SLOW)
    login(page)
    open_chat(page)
    send(page, "Check dashboard 42 and write a long report")
    # the answer's last word first: right after Send the composer may not show the run yet
    last = f"t{WORDS - 1}"
    expect(page.get_by_test_id("assistant-message").last).to_contain_text(last, timeout=60_000)
    answered(page)
    uninterrupted = shown(page)
    assert f"assistant-message {ALL_WORDS}" in uninterrupted
    assert "tool-card done get_dashboard" in uninterrupted

    open_chat(page)
    send(page, "Check dashboard 42 and write a long report")
    answer = page.get_by_test_id("assistant-message")
    # "t20" comes after the tool call, then the model holds the stream: the reload lands
    # mid-answer on however slow a machine
    expect(answer).to_contain_text("t20 ", timeout=MID_ANSWER_MS)
    page.reload()

    # The run went on without the page: it is followed again, Stop available.
    expect(page.get_by_test_id("stop")).to_be_visible(timeout=MID_ANSWER_MS)
    expect(page.get_by_test_id("tool-card")).to_have_attribute("data-state", "done")
    expect(answer).to_contain_text("t20 ")
    expect(answer).not_to_contain_text(f"t{HELD} ")  # the rest is still to come
    screenshot(page, "live-answer-after-reload")
    llm.go_on()
    expect(answer).to_contain_text(f"t{WORDS - 1}", timeout=60_000)
    answered(page)
    expect(page.get_by_test_id("banner")).to_have_count(0)
    assert shown(page) == uninterrupted  # every word once, in order, the tool card present

    page.reload()  # and that is what was stored
    expect(answer).to_contain_text(f"t{WORDS - 1}")
    assert shown(page) == uninterrupted


def test_a_confirmation_card_arrives_and_survives_a_reload_made_mid_answer(
    page: Page, llm: FakeLLM
) -> None:
    llm.enqueue(
        # held after "t10": the reload lands mid-answer
        {"tokens": 40, "delay_ms": 50, "hold_after_tokens": 11, "tool_calls": [DEPLOY_CALL]},
        {"text": "Deployed after the reload."},
    )
    login(page)
    open_chat(page)
    send(page, "Deploy dashboard 42 to staging")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("t10 ", timeout=MID_ANSWER_MS)
    page.reload()

    expect(page.get_by_test_id("stop")).to_be_visible(timeout=MID_ANSWER_MS)
    llm.go_on()
    card = page.get_by_test_id("confirm-card")
    expect(card).to_have_attribute("data-active", "true", timeout=30_000)
    expect(page.get_by_test_id("assistant-message")).to_contain_text("t39")
    expect(page.get_by_test_id("user-message")).to_have_text("Deploy dashboard 42 to staging")
    screenshot(page, "confirmation-after-live-reload")

    page.reload()  # the card as stored, still answerable
    expect(card).to_have_attribute("data-active", "true")
    card.get_by_test_id("confirm").click()
    expect(page.get_by_test_id("assistant-message").last).to_have_text("Deployed after the reload.")
    page.reload()
    expect(page.get_by_test_id("decision-record")).to_have_attribute("data-decision", "confirm")


def test_stop_in_a_second_tab_ends_the_first_tabs_answer_with_its_partial_text(
    page: Page, llm: FakeLLM
) -> None:
    llm.enqueue({"tokens": 300, "delay_ms": 60})  # about 18 s: Stop lands mid-answer
    login(page)
    open_chat(page)
    send(page, "Write a very long report")
    first = page.get_by_test_id("assistant-message")
    expect(first).to_contain_text("t10 ")

    other = page.context.new_page()  # same sign-in, same conversation
    other.goto("/chat")
    second = other.get_by_test_id("assistant-message")
    expect(other.get_by_test_id("stop")).to_be_visible()  # it follows the same run
    expect(second).to_contain_text("t20 ")
    other.get_by_test_id("stop").click()

    # The first tab's stream ends by itself within a second, with the partial answer.
    expect(page.get_by_test_id("send")).to_be_visible(timeout=3_000)
    answered(other)
    partial = first.inner_text()
    page.wait_for_timeout(500)
    assert first.inner_text() == partial  # nothing more arrives
    assert "t299" not in partial
    assert second.inner_text() == partial  # both tabs end with the same value
    expect(page.get_by_test_id("banner")).to_have_count(0)
    screenshot(page, "stopped-from-another-tab")

    page.reload()  # the partial answer is the stored one
    expect(first).to_have_text(partial)
