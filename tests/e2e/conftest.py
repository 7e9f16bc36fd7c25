"""Browser tests: Debian's chromium driven by Playwright, through the real nginx gateway in
front of the real backend, the real agent (its LLM is the scripted fake) and the built client.

They skip, saying why, only where nginx, chromium or Node.js is missing; .ci/run installs them.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, sync_playwright

from agent_chat import frontend
from tests.conftest import PASSWORDS
from tests.e2e.checks import DESKTOP, PHONE, new_context
from tests.e2e.gateway import nginx_binary, run_gateway
from tests.fakes.llm_server import FakeLLM
from tests.support.processes import ROOT, serve

CHROMIUM = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
ARTIFACTS = ROOT / "test-artifacts" / "e2e"
METRICS = ARTIFACTS / "metrics.json"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The first browser test also starts the agent, nginx and a build: give it room."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.timeout(300))


def _missing_tools() -> list[str]:
    missing = []
    if nginx_binary() is None:
        missing.append("nginx (apt-get install -y nginx)")
    if not Path(CHROMIUM).exists():
        missing.append(f"chromium at {CHROMIUM} (apt-get install -y chromium)")
    if shutil.which("node") is None or shutil.which("npm") is None:
        missing.append("Node.js 20 with npm")
    return missing


@pytest.fixture(scope="session")
def e2e_ready() -> None:
    missing = _missing_tools()
    if missing:
        pytest.skip("browser tests need " + ", ".join(missing))


@pytest.fixture(scope="session")
def frontend_dist(e2e_ready: None) -> Path:
    dist = frontend.ensure_built()
    METRICS.unlink(missing_ok=True)  # figures of this run only
    record_metric("bundle_bytes", bundle_sizes(dist))
    return dist


def bundle_sizes(dist: Path) -> dict[str, int]:
    """Gzip-compressed bytes of the first page load (index.html and what it links) and of the
    whole client (the chat is a chunk loaded when it is first opened)."""
    index = (dist / "index.html").read_text()
    first = [dist / "index.html"] + [dist / p for p in re.findall(r'="/(assets/[^"]+)"', index)]
    every = [p for p in dist.rglob("*") if p.suffix in (".js", ".css", ".html")]

    def packed(files: list[Path]) -> int:
        return sum(len(gzip.compress(p.read_bytes(), compresslevel=9)) for p in files)

    return {"first_load_gzip": packed(first), "total_gzip": packed(every)}


@pytest.fixture(scope="session")
def llm() -> Iterator[FakeLLM]:
    fake = FakeLLM().start()
    yield fake
    fake.stop()


@pytest.fixture(autouse=True)
def _fresh_llm(llm: FakeLLM) -> None:
    llm.reset()


@pytest.fixture(scope="session")
def agent_url(
    e2e_ready: None,
    seeded: dict[str, str],
    backend_url: str,
    llm: FakeLLM,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    env = {
        **seeded,
        "BACKEND_URL": backend_url,
        "LLM_API_BASE": llm.url,
        "LLM_API_KEY": "fake-llm-key",
        "LLM__REQUEST_TIMEOUT_S": "5",
    }
    log = tmp_path_factory.mktemp("e2e-logs") / "agent.log"
    with serve(["agent"], env, health_path="/healthz", log_path=log) as (base, _proc):
        yield base


@pytest.fixture(scope="session")
def gateway(
    backend_url: str, agent_url: str, frontend_dist: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The nginx gateway's URL."""
    prefix = tmp_path_factory.mktemp("nginx")
    with run_gateway(
        prefix,
        backend=urlsplit(backend_url).netloc,
        agent=urlsplit(agent_url).netloc,
        static_root=frontend_dist,
    ) as url:
        yield url


# Package, not session: Playwright's sync API keeps its event loop running in the main thread
# while it is open, so under xdist (this package runs whole in one worker, then that worker
# takes other modules) it must stop with the last browser test, or every later asyncio test of
# the worker finds "a running event loop".
@pytest.fixture(scope="package")
def browser(e2e_ready: None) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Watch:
    """What a page did that a person would not see: dialogs, console errors, CSP reports."""

    def __init__(self) -> None:
        self.dialogs: list[str] = []
        self.errors: list[str] = []

    def on_dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def csp_violations(self) -> list[str]:
        return [e for e in self.errors if "Content Security Policy" in e]


@pytest.fixture()
def watch() -> Watch:
    return Watch()


@pytest.fixture()
def page(browser: Browser, gateway: str, watch: Watch) -> Iterator[Page]:
    context = browser.new_context(
        base_url=gateway, locale="en-US", viewport={"width": 1440, "height": 900}
    )
    context.set_default_timeout(15_000)
    tab = context.new_page()
    tab.on("dialog", watch.on_dialog)
    tab.on("console", watch.on_console)
    yield tab
    context.close()
    assert watch.csp_violations() == []


@pytest.fixture(params=["1400", "390"], ids=["1400px", "390px"])
def sized_page(
    request: pytest.FixtureRequest, browser: Browser, gateway: str, watch: Watch
) -> Iterator[Page]:
    """A page 1400 px wide, and again 390 px wide (a phone); clipboard allowed, axe-core loaded."""
    context = new_context(browser, gateway, DESKTOP if request.param == "1400" else PHONE)
    tab = context.new_page()
    tab.on("dialog", watch.on_dialog)
    tab.on("console", watch.on_console)
    yield tab
    context.close()
    assert watch.csp_violations() == []


def width_of(page: Page) -> int:
    return int((page.viewport_size or {"width": 0})["width"])


def login(page: Page, username: str = "admin") -> None:
    """Sign in through the login form and wait for the BI shell."""
    page.goto("/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORDS[username])
    page.get_by_role("button", name="Sign in").click()
    page.get_by_test_id("user").wait_for(state="attached")  # in the menu on a phone


def open_chat(page: Page) -> None:
    """Open the assistant drawer (if closed) and start a new conversation."""
    toggle = page.get_by_test_id("assistant-toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    page.get_by_test_id("new-conversation").click()
    page.get_by_test_id("messages").wait_for()


def send(page: Page, text: str) -> None:
    page.get_by_test_id("composer").fill(text)
    page.get_by_test_id("send").click()


def screenshot(page: Page, name: str) -> None:
    """Keep a picture of a main state under test-artifacts/e2e/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{re.sub(r'[^a-z0-9_-]', '-', name)}.png"))


def record_metric(name: str, value: Any) -> None:
    """Figures for the report (not assertions): test-artifacts/e2e/metrics.json."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    data = json.loads(METRICS.read_text()) if METRICS.exists() else {}
    data[name] = value
    METRICS.write_text(json.dumps(data, indent=2, sort_keys=True))
