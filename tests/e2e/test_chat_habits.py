"""What people do in chat apps: copy, regenerate, edit and resend, rename, search, Esc to stop,
Enter to send; at 1400 and 390 px wide."""

from __future__ import annotations

import uuid

import httpx
from playwright.sync_api import Page, expect

from tests.e2e.checks import horizontal_overflow
from tests.e2e.conftest import login, open_chat, screenshot, send, width_of
from tests.fakes.llm_server import FakeLLM


def last_user_text(request: dict) -> str:
    users = [m for m in request["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


def test_an_answer_is_copied_regenerated_and_the_question_edited_and_resent(
    sized_page: Page, llm: FakeLLM
) -> None:
    page = sized_page
    llm.enqueue(
        {"text": "First **answer**."}, {"text": "Second answer."}, {"text": "Third answer."}
    )
    login(page)
    open_chat(page)
    composer = page.get_by_test_id("composer")
    composer.fill("Which dashboards")
    composer.press("Shift+Enter")  # a line break, not a send
    composer.press_sequentially("fail?")
    expect(composer).to_have_value("Which dashboards\nfail?")
    composer.press("Enter")
    answers = page.get_by_test_id("assistant-message")
    expect(answers).to_have_count(1)
    expect(answers.first).to_have_text("First answer.")
    expect(page.get_by_test_id("user-message")).to_have_text("Which dashboards\nfail?")
    expect(page.get_by_test_id("send")).to_be_visible()
    expect(composer).to_be_focused()  # typing goes on where it was

    page.get_by_test_id("copy-message").last.click()
    expect(page.get_by_test_id("copy-message").last).to_have_attribute("data-state", "copied")
    assert page.evaluate("navigator.clipboard.readText()") == "First **answer**."

    page.get_by_test_id("regenerate").click()
    expect(answers).to_have_count(2)
    expect(answers.last).to_have_text("Second answer.")
    expect(page.get_by_test_id("user-message")).to_have_count(2)
    assert last_user_text(llm.requests[-1]) == "Which dashboards\nfail?"
    expect(page.get_by_test_id("regenerate")).to_have_count(1)  # only on the last answer
    screenshot(page, f"regenerated-{width_of(page)}")

    page.get_by_test_id("edit-question").click()
    expect(composer).to_have_value("Which dashboards\nfail?")
    expect(page.get_by_test_id("composer")).to_be_focused()
    composer.fill("Which dashboards are failing today?")
    composer.press("Enter")
    expect(answers).to_have_count(3)
    expect(answers.last).to_have_text("Third answer.")
    assert last_user_text(llm.requests[-1]) == "Which dashboards are failing today?"
    assert len(llm.requests) == 3
    assert horizontal_overflow(page) <= 0


def test_esc_stops_a_streaming_answer_and_the_composer_keeps_the_focus(
    sized_page: Page, llm: FakeLLM
) -> None:
    page = sized_page
    llm.enqueue({"tokens": 400, "delay_ms": 40})
    login(page)
    open_chat(page)
    send(page, "Write a very long report")
    answer = page.get_by_test_id("assistant-message")
    expect(answer).to_contain_text("t10 ")
    expect(page.get_by_test_id("composer")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("stopped")).to_be_visible()
    expect(page.get_by_test_id("send")).to_be_visible()
    partial = answer.inner_text()
    page.wait_for_timeout(300)
    assert answer.inner_text() == partial and "t399" not in partial
    expect(page.get_by_test_id("composer")).to_be_focused()
    screenshot(page, f"esc-stopped-{width_of(page)}")


def test_a_conversation_is_renamed_and_found_by_its_title_and_its_text(
    sized_page: Page,
    llm: FakeLLM,
    api: httpx.Client,
    as_user: dict[str, dict[str, str]],
) -> None:
    page = sized_page
    word = f"flamingo{uuid.uuid4().hex[:6]}"  # the same user runs this at both widths
    title_text = f"Orders table plans {uuid.uuid4().hex[:4]}"
    llm.enqueue({"text": f"The {word} migration moves the orders table."}, {"text": "Noted."})
    login(page)
    open_chat(page)
    send(page, "Tell me about the migration")
    expect(page.get_by_test_id("assistant-message")).to_contain_text(word)
    expect(page.get_by_test_id("send")).to_be_visible()

    page.get_by_test_id("rename").click()
    title = page.get_by_test_id("rename-input")
    title.fill(title_text)
    title.press("Enter")
    expect(page.get_by_test_id("thread-title")).to_have_text(title_text)
    expect(page.get_by_test_id("rename")).to_be_focused()
    listed = api.get("/api/assistant/conversations", headers=as_user["admin"]).json()["items"]
    renamed = next(c for c in listed if c["title"] == title_text)

    page.get_by_test_id("new-conversation").click()
    send(page, "Something else entirely")
    expect(page.get_by_test_id("assistant-message")).to_have_text("Noted.")

    page.get_by_role("button", name="Conversations list").click()
    search = page.get_by_test_id("conversation-search")
    search.fill(word)  # a word of the answer, not of the title
    hits = page.get_by_test_id("search-hit")
    expect(hits).to_have_count(1)
    expect(hits).to_have_attribute("data-id", renamed["id"])
    expect(hits.locator("mark")).to_have_text(word)
    screenshot(page, f"search-{width_of(page)}")
    search.fill(title_text.lower())  # the new title
    expect(hits).to_have_count(1)
    search.fill("nosuchwordanywhere")
    expect(page.get_by_test_id("search-results")).to_contain_text("Found: 0")
    search.fill(word)
    hits.first.locator("button").click()
    expect(page.get_by_test_id("thread-title")).to_have_text(title_text)
    expect(page.get_by_test_id("assistant-message")).to_contain_text(word)
    assert horizontal_overflow(page) <= 0
