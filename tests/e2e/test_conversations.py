"""The conversation list, the full-page variant, the language switch and a second tab."""

from __future__ import annotations

import re
import time

import httpx
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import login, open_chat, screenshot, send
from tests.fakes.llm_server import FakeLLM


def test_a_conversation_is_archived_and_restored(page: Page, llm: FakeLLM) -> None:
    llm.enqueue({"text": "Noted."})
    login(page)
    page.goto("/chat")  # the embedded full-page variant of the same chat
    page.get_by_test_id("new-conversation").click()
    send(page, "Remember the quarterly numbers")
    expect(page.get_by_test_id("assistant-message")).to_have_text("Noted.")

    item = page.get_by_test_id("conversation").filter(has_text="Remember the quarterly numbers")
    expect(item).to_contain_text(re.compile(r"\d{4}.* · 2 messages"))
    screenshot(page, "full-page-chat")
    item.get_by_test_id("archive-item").click()
    expect(item).to_have_count(0)
    expect(page.get_by_text("This conversation is archived")).to_be_visible()

    page.get_by_test_id("show-archived").click()
    archived = page.get_by_test_id("conversation").filter(has_text="Remember the quarterly")
    expect(archived).to_have_count(1)
    screenshot(page, "archived-list")
    archived.get_by_test_id("restore").click()
    expect(archived).to_have_count(0)

    page.get_by_role("tab", name="Active").click()
    restored = page.get_by_test_id("conversation").filter(has_text="Remember the quarterly")
    expect(restored).to_have_count(1)
    expect(page.get_by_test_id("composer")).to_be_enabled()


def test_archiving_another_conversation_from_the_list_leaves_the_open_one_alone(
    page: Page, llm: FakeLLM
) -> None:
    llm.enqueue({"text": "First answer."}, {"text": "Second answer."})
    login(page)
    page.goto("/chat")
    page.get_by_test_id("new-conversation").click()
    send(page, "The first of two conversations")
    expect(page.get_by_test_id("assistant-message")).to_have_text("First answer.")
    page.get_by_test_id("new-conversation").click()
    send(page, "The second of two conversations")
    expect(page.get_by_test_id("assistant-message")).to_have_text("Second answer.")

    first = page.get_by_test_id("conversation").filter(has_text="The first of two")
    first.get_by_test_id("archive-item").click()
    expect(first).to_have_count(0)

    # The open conversation is the second one, and it is not archived.
    expect(page.get_by_text("This conversation is archived")).to_have_count(0)
    expect(page.get_by_test_id("composer")).to_be_enabled()
    expect(page.get_by_test_id("assistant-message")).to_have_text("Second answer.")


def test_the_interface_switches_to_russian_and_stays_russian_after_a_reload(
    page: Page, llm: FakeLLM
) -> None:
    login(page)
    page.get_by_test_id("language").select_option("ru")
    expect(page.get_by_role("heading", name="Дашборды")).to_be_visible()
    expect(page.get_by_test_id("assistant-toggle")).to_have_text("Открыть ассистента")
    page.reload()
    page.get_by_test_id("assistant-toggle").click()
    page.get_by_test_id("new-conversation").click()
    expect(page.get_by_test_id("send")).to_have_text("Отправить")
    expect(page.get_by_test_id("composer")).to_have_attribute(
        "placeholder", "Сообщение ассистенту…"
    )
    assert page.evaluate("document.documentElement.lang") == "ru"
    screenshot(page, "russian")


def test_a_second_tab_is_told_the_conversation_is_busy(
    page: Page, browser: Browser, gateway: str, llm: FakeLLM
) -> None:
    llm.enqueue({"text": " ".join(["slow"] * 200), "delay_ms": 80})
    login(page)
    open_chat(page)
    # Open before the run starts: a tab opened while it runs follows it (test_live_answers.py).
    other = page.context.new_page()  # same browser session: same sign-in, same conversation
    other.goto("/chat")
    expect(other.get_by_test_id("send")).to_be_visible()
    send(page, "Take your time")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("slow")

    other.get_by_test_id("composer").fill("Me too")
    other.get_by_test_id("send").click()
    expect(other.get_by_test_id("error")).to_have_attribute("data-code", "CONVERSATION_BUSY")
    expect(other.get_by_test_id("error")).to_contain_text("another tab")
    screenshot(other, "second-tab-busy")
    page.get_by_test_id("stop").click()


def test_archiving_while_an_answer_streams_is_refused_and_said(
    page: Page, llm: FakeLLM, api: httpx.Client, as_user: dict[str, dict[str, str]]
) -> None:
    llm.enqueue({"text": " ".join(["slow"] * 200), "delay_ms": 80})
    login(page)
    open_chat(page)
    send(page, "Take your time")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("slow")

    page.get_by_test_id("archive").click()

    refused = page.get_by_test_id("archive-refused")
    expect(refused).to_be_visible()
    expect(refused).to_contain_text("still answering")
    expect(page.get_by_text("This conversation is archived")).to_have_count(0)
    screenshot(page, "archive-refused")
    cid = page.evaluate("localStorage.getItem('agent-chat.conversation')")
    page.get_by_test_id("stop").click()
    deadline = time.monotonic() + 30  # the run lets go of the conversation just after it stops
    active = f"/api/agent/conversations/{cid}/active"
    while api.get(active, headers=as_user["admin"]).json()["active"]:
        assert time.monotonic() < deadline, "the run kept the conversation"
        time.sleep(0.1)
    page.get_by_test_id("archive").click()
    expect(page.get_by_text("This conversation is archived")).to_be_visible()
    expect(refused).to_have_count(0)
