"""The usage screens show what the API says: a person's tokens in the conversation's header and
on their Usage page (phone width), and an admin's per-user table and budget editor (desktop);
both axe-clean, no sideways scrolling on a phone."""

from __future__ import annotations

import uuid

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.conftest import bearer
from tests.conftest import login as api_login
from tests.e2e.checks import DESKTOP, PHONE, axe_findings, horizontal_overflow, new_context
from tests.e2e.conftest import Watch, login, screenshot, send
from tests.fakes.llm_server import FakeLLM

USAGE = {"prompt_tokens": 250, "completion_tokens": 9}


def sign_in(page: Page, username: str, password: str) -> None:
    page.goto("/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_test_id("user").wait_for(state="attached")


@pytest.mark.timeout(540)  # run alone it may be the first browser test: a build and every process
def test_the_usage_page_and_the_admin_view_show_the_numbers_of_the_api(
    browser: Browser, gateway: str, watch: Watch, llm: FakeLLM, api: httpx.Client, tokens
) -> None:
    username, password = f"usage_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex}"
    created = api.post(
        "/api/admin/users",
        json={"username": username, "password": password, "roles": ["viewer"]},
        headers=bearer(tokens["admin"]),
    )
    assert created.status_code == 201, created.text
    user_id = created.json()["id"]
    llm.enqueue({"text": "Counted answer.", "usage": USAGE})

    chat = new_context(browser, gateway, DESKTOP).new_page()
    chat.on("console", watch.on_console)
    sign_in(chat, username, password)
    chat.goto("/chat")
    chat.get_by_test_id("new-conversation").click()
    expect(chat.get_by_test_id("resource-panel")).to_be_visible()
    expect(chat.get_by_test_id("composer")).to_be_editable()
    send(chat, "Count me")
    expect(chat.get_by_test_id("assistant-message")).to_have_text("Counted answer.", timeout=30_000)
    token = api_login(api, username, password)
    me = api.get("/api/usage/me", headers=bearer(token)).json()
    total = me["today"]["total_tokens"]
    assert total == 259 and me["today"]["model_calls"] == 1
    [conversation] = me["by_conversation"]
    one = api.get(
        f"/api/assistant/conversations/{conversation['conversation_id']}", headers=bearer(token)
    ).json()
    assert one["usage"]["total_tokens"] == total
    tokens_shown = chat.get_by_test_id("conversation-tokens")
    expect(tokens_shown).to_have_attribute("data-value", str(total))
    expect(tokens_shown).to_have_text("259 tokens")

    phone = new_context(browser, gateway, PHONE).new_page()
    phone.on("console", watch.on_console)
    sign_in(phone, username, password)
    phone.goto("/usage")
    expect(phone.get_by_test_id("usage-today-total")).to_have_attribute("data-value", str(total))
    expect(phone.get_by_test_id("usage-today-total")).to_contain_text("259 tokens")
    expect(phone.get_by_test_id("usage-today-calls")).to_have_attribute("data-value", "1")
    expect(phone.get_by_test_id("usage-budget")).to_contain_text("No budget")
    expect(phone.get_by_test_id("usage-conversations")).to_contain_text("Count me")
    expect(phone.get_by_test_id("admin-usage")).to_have_count(0)  # a viewer sees no one else
    assert horizontal_overflow(phone) <= 0
    assert axe_findings(phone) == []
    screenshot(phone, "usage-page-390")

    desk = new_context(browser, gateway, DESKTOP).new_page()
    desk.on("console", watch.on_console)
    login(desk, "admin")
    desk.goto("/usage")
    row = desk.locator(f'[data-testid="admin-usage-row"][data-user="{username}"]')
    expect(row).to_have_attribute("data-total", str(total))
    expect(row).to_have_attribute("data-calls", "1")
    items = api.get("/api/admin/usage", headers=bearer(tokens["admin"])).json()["items"]
    [mine] = [i for i in items if i["user_id"] == user_id]
    assert mine["total_tokens"] == total
    desk.get_by_role("button", name="Sort by Total").click()
    assert axe_findings(desk) == []
    row.get_by_test_id("budget-input").fill("1000")
    row.get_by_test_id("budget-save").click()
    expect(row.get_by_role("status")).to_have_text("Saved")
    assert api.get("/api/usage/me", headers=bearer(token)).json()["budget"]["daily_tokens"] == 1000
    with desk.expect_download() as download:
        desk.get_by_test_id("usage-csv").click()
    csv = download.value.path().read_text()
    assert f"{user_id},{username},250,9,259,1," in csv
    desk.get_by_test_id("usage-group").select_option("model")
    expect(desk.locator(f'[data-testid="admin-usage-row"][data-user="{username}"]')).to_have_count(
        1
    )
    screenshot(desk, "usage-admin-1400")
