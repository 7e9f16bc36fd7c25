"""A person signs in, asks, and watches the answer stream in."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import login, open_chat, record_metric, screenshot, send
from tests.fakes.llm_server import FakeLLM

WORDS = " ".join(f"word{i}" for i in range(40))

# Records each distinct length of the streaming answer, as the browser showed it.
OBSERVE = """() => {
  window.__lengths = [];
  const root = document.querySelector('[data-testid="messages"]');
  new MutationObserver(() => {
    const live = root.querySelector('[data-testid="assistant-message"]');
    const n = live ? live.textContent.length : 0;
    if (n && window.__lengths.at(-1) !== n) window.__lengths.push(n);
  }).observe(root, { childList: true, subtree: true, characterData: true });
}"""


def test_a_person_signs_in_and_sees_the_answer_stream_in(page: Page, llm: FakeLLM) -> None:
    llm.enqueue({"text": f"**Streaming** {WORDS} end.", "delay_ms": 25})
    login(page)
    screenshot(page, "dashboards")
    open_chat(page)
    page.evaluate(OBSERVE)
    send(page, "Say many words")

    answer = page.get_by_test_id("assistant-message")
    expect(answer).to_contain_text("word39 end.")
    expect(answer.locator("strong")).to_have_text("Streaming")
    lengths = page.evaluate("window.__lengths")
    assert len(lengths) >= 5, lengths  # it grew in steps, not in one piece
    assert lengths == sorted(lengths)
    expect(page.get_by_test_id("user-message")).to_have_text("Say many words")
    screenshot(page, "answer-streamed")
    record_metric("first_token_ms_first_message", _first_token_ms(page))

    llm.enqueue({"text": "Second answer, streamed.", "delay_ms": 25})
    send(page, "Once more")
    expect(page.get_by_test_id("assistant-message").last).to_have_text("Second answer, streamed.")
    record_metric("first_token_ms_next_message", _first_token_ms(page))


def _first_token_ms(page: Page) -> int:
    """Submit to first streamed text, as the page measured it (performance.now)."""
    value = page.get_by_test_id("messages").get_attribute("data-first-token-ms")
    assert value is not None and int(value) > 0
    return int(value)
