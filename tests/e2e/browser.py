"""The built client behind a private nginx before a suite's own backend and agent, and a
chromium page on it: for the browser tests of suites with stacks of their own (tests/superset,
tests/superset_person); tests/e2e's own stack is its conftest's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, sync_playwright

from agent_chat import frontend
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, _missing_tools
from tests.e2e.gateway import run_gateway


@contextmanager
def client_gateway(prefix: Path, *, backend_url: str, agent_url: str) -> Iterator[str]:
    """The gateway's URL (the test is skipped when nginx, chromium or Node is missing)."""
    missing = _missing_tools()
    if missing:
        pytest.skip("browser tests need " + ", ".join(missing))
    with run_gateway(
        prefix,
        backend=urlsplit(backend_url).netloc,
        agent=urlsplit(agent_url).netloc,
        static_root=frontend.ensure_built(),
    ) as url:
        yield url


@contextmanager
def chromium_page(gateway: str, *, timeout_ms: int = 20_000) -> Iterator[Page]:
    """A desktop-sized page (1440 x 900, en-US) in a fresh chromium."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(
            base_url=gateway, locale="en-US", viewport={"width": 1440, "height": 900}
        )
        context.set_default_timeout(timeout_ms)
        yield context.new_page()
        context.close()
        browser.close()
