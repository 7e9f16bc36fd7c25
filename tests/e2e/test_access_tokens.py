"""Personal access tokens in the browser (create, copy once, revoke from the account menu), an
MCP client through the nginx gateway with such a token, and the admin's external MCP servers
page."""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.agent.mcp_support import SECRET, FakeServer, mcp_session
from tests.conftest import PASSWORDS, bearer
from tests.e2e.checks import DESKTOP, axe_findings, new_context
from tests.e2e.conftest import Watch, screenshot
from tests.e2e.test_usage import sign_in


@pytest.mark.timeout(540)  # run alone it may be the first browser test: a build and every process
def test_a_person_creates_copies_once_and_revokes_a_token(
    browser: Browser, gateway: str, watch: Watch, api: httpx.Client, tokens: dict[str, str]
) -> None:
    username, password = f"pat_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex}"
    created = api.post(
        "/api/admin/users",
        json={"username": username, "password": password, "roles": ["editor"]},
        headers=bearer(tokens["admin"]),
    )
    assert created.status_code == 201, created.text
    page = new_context(browser, gateway, DESKTOP).new_page()
    page.on("console", watch.on_console)
    sign_in(page, username, password)
    page.get_by_test_id("tokens-link").click()
    page.get_by_test_id("token-name").fill("my script")
    page.get_by_test_id("token-scope").select_option("read")
    page.get_by_test_id("token-create").click()
    secret = page.get_by_test_id("token-secret")
    expect(secret).to_contain_text("acp_")
    token = secret.inner_text().strip()
    page.get_by_test_id("token-copy").click()
    expect(page.get_by_test_id("token-copy")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == token
    assert axe_findings(page) == []
    screenshot(page, "tokens-created-1400")

    me = api.get("/api/auth/me", headers=bearer(token))
    assert me.status_code == 200 and me.json()["roles"] == ["viewer"]  # read scope

    page.reload()
    expect(page.get_by_test_id("token-row")).to_have_count(1)
    expect(page.get_by_test_id("token-secret")).to_have_count(0)  # shown once only
    assert token not in page.content()
    page.get_by_test_id("token-revoke").click()
    expect(page.get_by_test_id("token-row")).to_have_count(0)
    assert api.get("/api/auth/me", headers=bearer(token)).status_code == 401


def test_an_mcp_client_reaches_the_agent_through_the_gateway(gateway, api, tokens):
    """(Sync: the browser tests' Playwright owns this thread's event loop; the SDK client
    runs on a loop of its own thread.)"""
    created = api.post(
        "/api/auth/tokens", json={"name": "desktop"}, headers=bearer(tokens["editor"])
    ).json()

    async def call(session: Any) -> Any:
        names = [tool.name for tool in (await session.list_tools()).tools]
        result = await session.call_tool("get_dashboard", {"dashboard_id": 42})
        return names, result

    with ThreadPoolExecutor(1) as thread:
        names, result = thread.submit(
            asyncio.run, mcp_session(gateway, created["token"], call)
        ).result()
    assert "create_branch" in names and "deploy_dashboard" not in names
    assert not result.isError and result.structuredContent["id"] == 42
    assert httpx.post(f"{gateway}/api/agent/mcp", json={}).status_code == 401


@pytest.mark.timeout(300)
def test_an_admin_adds_an_external_server_and_sees_its_tools(
    browser: Browser,
    gateway: str,
    watch: Watch,
    api: httpx.Client,
    tokens: dict[str, str],
    tmp_path,
) -> None:
    server = FakeServer(tmp_path / "wiped.txt").start()
    name = f"web{uuid.uuid4().hex[:6]}"
    try:
        page = new_context(browser, gateway, DESKTOP).new_page()
        page.on("console", watch.on_console)
        sign_in(page, "admin", PASSWORDS["admin"])
        page.get_by_test_id("mcp-link").click()
        page.get_by_test_id("mcp-name").fill(name)
        page.get_by_test_id("mcp-url").fill(server.url)
        page.get_by_test_id("mcp-header-name").fill("X-Api-Key")
        page.get_by_test_id("mcp-header-value").fill(SECRET)
        page.get_by_test_id("mcp-confirm").fill("wipe")
        page.get_by_test_id("mcp-add").click()
        card = page.locator(f'[data-testid="mcp-server"][data-name="{name}"]')
        expect(card).to_have_attribute("data-status", "ok", timeout=20_000)
        expect(card.get_by_test_id("mcp-tool")).to_have_count(8)
        # Each tool says whether it asks first, and why (the server's annotations, the list).
        reasons = card.get_by_test_id("mcp-tool-confirm")
        expect(reasons.and_(page.locator('[data-reason="read_only"]'))).to_have_count(5)
        expect(reasons.and_(page.locator('[data-reason="listed"]'))).to_have_count(1)
        expect(page.get_by_test_id("mcp-note")).to_contain_text("MCP_DEV_USERNAME")
        expect(card).to_contain_text(f"{name}__wipe")
        assert SECRET not in page.content()
        assert axe_findings(page) == []
        screenshot(page, "mcp-servers-1400")
        card.get_by_test_id("mcp-remove").click()
        expect(card).to_have_count(0)
    finally:
        server.kill()
