# ruff: noqa: RUF001  (Russian text is intended)
"""What a new user meets with their Superset connected (issue 49), in chromium at 1400 and 390 px,
in English and Russian, with the offline demo model (no LLM configured): a time series' dates
read as dates in time order; dashboards named by their title ("Why is Orders overview
failing?", "Deploy Revenue daily to production") and by the page in focus; a deploy card that
says what will happen and warns before Confirm when the version fails validation, and a refusal
in the person's language; on a phone every action of the chat's header is in its menu.

The other modules of the Superset group change the session's two dashboards (commits, deploys,
charts through Superset's MCP), so this module builds its own in staging (an ok one, a failing one
and Revenue daily), names them by their titles and looks them up by the ids it made. It runs
after the modules that count the staging dashboards (file order within the Superset group)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.conftest import PASSWORDS
from tests.e2e.browser import client_gateway
from tests.e2e.checks import DESKTOP, PHONE, horizontal_overflow, new_context
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, screenshot
from tests.superset.conftest import Backend, Stack
from tests.support import superset
from tests.support.processes import serve
from tests.support.superset_build import (
    BROKEN,
    GOOD,
    REVENUE_DAILY,
    DashboardSpec,
    SupersetAdmin,
    add_days,
    build_dashboard,
)

pytestmark = pytest.mark.timeout(600)

# The walk's own dashboards: the session's two (GOOD, BROKEN) are changed by other modules.
HEALTHY = DashboardSpec("Harbor orders", "harbor-orders", GOOD.charts)
FAILING = DashboardSpec("Harbor discounts", "harbor-discounts", BROKEN.charts)  # fails: Discounts
WALK = (HEALTHY, FAILING, REVENUE_DAILY)  # built in this order: Superset's ids ascend


@pytest.fixture(scope="module")
def titles(
    ss_api: httpx.Client,
    ss_as: dict[str, dict[str, str]],
    synced: dict[str, int],
    superset_stack: Stack,
) -> dict[str, int]:
    """The walk's dashboards built in staging (Revenue daily: days of orders ordered by
    revenue) and synced once; the platform's id of each by its (unique) title."""
    add_days(superset_stack.warehouses["staging"])
    admin = SupersetAdmin(superset_stack.staging.url, superset.ADMIN_USER, superset.ADMIN_PASSWORD)
    try:
        built = {spec.title: build_dashboard(admin, spec) for spec in WALK}
        assert list(built.values()) == sorted(built.values())  # Superset's ids, in WALK's order
    finally:
        admin.close()
    response = ss_api.post("/api/admin/superset/sync", headers=ss_as["admin"])
    assert response.status_code == 200, response.text
    listed = ss_api.get("/api/dashboards", params={"limit": 200}, headers=ss_as["viewer"])
    assert listed.status_code == 200, listed.text
    found: dict[str, int] = {}
    for item in listed.json()["items"]:
        if item["title"] in built:
            assert item["title"] not in found, listed.json()  # one dashboard per title
            found[item["title"]] = item["id"]
    assert set(found) == set(built), listed.json()
    return found


@pytest.fixture(scope="module")
def demo_agent(
    ss_env: dict[str, str], ss_backend: Backend, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """An agent with no LLM configured: the built-in offline demo model answers."""
    env = {**ss_env, "BACKEND_URL": ss_backend.url, "LLM_API_BASE": "", "LLM_API_KEY": ""}
    log = tmp_path_factory.mktemp("walk-agent") / "agent.log"
    with serve(["agent"], env, health_path="/healthz", log_path=log) as (base, _proc):
        yield base


@pytest.fixture(scope="module")
def gateway(
    ss_backend: Backend, demo_agent: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    prefix = tmp_path_factory.mktemp("walk-nginx")
    with client_gateway(prefix, backend_url=ss_backend.url, agent_url=demo_agent) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _context(browser: Browser, gateway: str, viewport: dict[str, int], lang: str) -> BrowserContext:
    context = new_context(browser, gateway, viewport)
    context.set_default_timeout(30_000)
    context.add_init_script(f"localStorage.setItem('agent-chat.locale', '{lang}')")
    return context


def _sign_in(page: Page, username: str = "admin") -> None:
    page.goto("/login")
    page.locator("input[name=username]").fill(username)
    page.locator("input[type=password]").fill(PASSWORDS[username])
    page.locator("form button[type=submit]").click()
    page.get_by_test_id("user").wait_for(state="attached")


def _open_drawer(page: Page) -> None:
    toggle = page.get_by_test_id("assistant-toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    page.get_by_test_id("new-conversation").click()
    page.get_by_test_id("messages").wait_for()


def _ask(page: Page, text: str) -> None:
    page.get_by_test_id("composer").fill(text)
    page.get_by_test_id("send").click()


VIEWS = [(DESKTOP, "en"), (PHONE, "ru"), (DESKTOP, "ru"), (PHONE, "en")]
IDS = ["1400px-en", "390px-ru", "1400px-ru", "390px-en"]
DAYS = {
    "en": ["Oct 30, 2026", "Oct 31, 2026", "Nov 1, 2026", "Nov 3, 2026"],
    "ru": ["30 окт. 2026 г.", "31 окт. 2026 г.", "1 нояб. 2026 г.", "3 нояб. 2026 г."],
}


@pytest.mark.parametrize(("viewport", "lang"), VIEWS[:2], ids=IDS[:2])
def test_a_time_series_reads_as_dates_in_time_order(
    browser: Browser, gateway: str, titles: dict[str, int], viewport: dict[str, int], lang: str
) -> None:
    context = _context(browser, gateway, viewport, lang)
    page = context.new_page()
    _sign_in(page, "viewer")
    page.goto(f"/dashboards/{titles[REVENUE_DAILY.title]}")
    chart = page.get_by_test_id("dashboard-chart").get_by_test_id("chart")
    expect(chart).to_have_attribute("data-kind", "line")
    expect(chart).to_have_attribute("data-state", "drawn")
    chart.get_by_test_id("chart-toggle").click()
    cells = chart.locator("tbody tr td:first-child")
    expect(cells).to_have_text(DAYS[lang])  # dates, in the page's language, in time order
    expect(chart).not_to_contain_text("1,79")  # never epoch milliseconds
    assert horizontal_overflow(page) <= 0
    screenshot(page, f"walk-dates-{IDS[VIEWS.index((viewport, lang))]}")
    context.close()


ASK_WHY = {
    "en": ("Why is {title} failing?", "{title} (id {id}) is ok"),
    "ru": ("Почему падает {title}?", "{title} (id {id}): статус: в порядке"),
}


@pytest.mark.parametrize(("viewport", "lang"), VIEWS, ids=IDS)
def test_a_dashboard_named_by_its_title_and_the_one_in_focus(
    browser: Browser, gateway: str, titles: dict[str, int], viewport: dict[str, int], lang: str
) -> None:
    context = _context(browser, gateway, viewport, lang)
    page = context.new_page()
    _sign_in(page, "viewer")
    page.goto(f"/dashboards/{titles[FAILING.title]}")  # another dashboard is open beside the chat
    expect(page.get_by_test_id("dashboard")).to_be_visible()
    _open_drawer(page)
    question, answer = ASK_WHY[lang]
    _ask(page, question.format(title=HEALTHY.title))
    expect(page.locator('[data-testid="tool-card"][data-tool="dashboard_health"]')).to_have_count(1)
    expect(page.get_by_test_id("assistant-message").last).to_contain_text(
        answer.format(title=HEALTHY.title, id=titles[HEALTHY.title])
    )
    # "Why is this failing?": the page in focus (the failing one), its failing chart named.
    _ask(page, "Why is this failing?" if lang == "en" else "Почему это падает?")
    expect(page.locator('[data-testid="tool-card"][data-tool="dashboard_health"]')).to_have_count(2)
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Discounts by region")
    context.close()


SUMMARY = {
    "en": "Deploy “{title}” version {version} (main, what staging serves) from staging"
    " to Production.",
    "ru": "Развернуть «{title}» версии {version} (main, то, что в staging) из staging"
    " в Production.",
}
WARNING = {"en": "fails validation", "ru": "не проходит проверку"}
DEPLOYED = {"en": "to production: version", "ru": "развёрнут в production"}


def _main_version(api: httpx.Client, headers: dict[str, str], dashboard_id: int) -> int:
    return int(
        api.get(f"/api/dashboards/{dashboard_id}", headers=headers).json()["main_version_id"]
    )


@pytest.mark.parametrize(
    ("viewport", "lang"), [(PHONE, "en"), (DESKTOP, "ru")], ids=["390px-en", "1400px-ru"]
)
def test_deploys_by_name_a_card_in_words_that_warns_before_confirm(
    browser: Browser,
    gateway: str,
    titles: dict[str, int],
    ss_api: httpx.Client,
    ss_as: dict[str, dict[str, str]],
    viewport: dict[str, int],
    lang: str,
) -> None:
    context = _context(browser, gateway, viewport, lang)
    page = context.new_page()
    _sign_in(page, "admin")
    page.goto("/")
    _open_drawer(page)
    head = page.locator(".thread-head")  # the drawer's header fits it, in Russian too
    assert head.evaluate("e => e.scrollWidth <= e.clientWidth"), page.evaluate(WIDEST)
    # A version that passes: the card says what will happen, without a warning; it lands.
    _ask(
        page,
        "Deploy Revenue daily to production" if lang == "en" else "Задеплой Revenue daily в прод",
    )
    card = page.get_by_test_id("confirm-card").last
    expect(card).to_have_attribute("data-active", "true")
    version = _main_version(ss_api, ss_as["admin"], titles[REVENUE_DAILY.title])
    summary = SUMMARY[lang].format(title=REVENUE_DAILY.title, version=version)
    expect(card.get_by_test_id("deploy-summary")).to_have_text(summary)
    expect(card.get_by_test_id("deploy-warning")).to_have_count(0)
    card.get_by_test_id("confirm").click()
    expect(page.get_by_test_id("assistant-message").last).to_contain_text(DEPLOYED[lang])
    # A version that fails validation: the card warns before Confirm, naming the chart; the
    # refusal after Confirm is in the person's language.
    _ask(
        page,
        f"Deploy {FAILING.title} to production"
        if lang == "en"
        else f"Задеплой {FAILING.title} в прод",
    )
    card = page.get_by_test_id("confirm-card").last
    expect(card).to_have_attribute("data-active", "true")
    warning = card.get_by_test_id("deploy-warning")
    expect(warning).to_contain_text(WARNING[lang])
    expect(warning).to_contain_text("Discounts by region")
    assert horizontal_overflow(page) <= 0
    screenshot(page, f"walk-deploy-warning-{lang}-{viewport['width']}")
    card.get_by_test_id("confirm").click()
    refusal = page.get_by_test_id("assistant-message").last
    expect(refusal).to_contain_text(WARNING[lang])
    if lang == "ru":
        expect(refusal).not_to_contain_text("fails validation")
    context.close()


# What sticks out on the right (for an overflow's message).
WIDEST = """[...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
  .slice(-5).map(e => e.tagName + '.' + e.className + ' '
    + Math.round(e.getBoundingClientRect().right) + ' ' + (e.textContent || '').slice(0, 40))"""

MENU = {
    "en": ["Share", "Export", "Archive", "+ New conversation"],
    "ru": ["Поделиться", "Экспорт", "В архив", "+ Новый диалог"],
}


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_on_a_phone_every_header_action_is_in_its_menu(
    browser: Browser, gateway: str, titles: dict[str, int], lang: str
) -> None:
    context = _context(browser, gateway, PHONE, lang)
    page = context.new_page()
    _sign_in(page, "viewer")
    page.goto("/")
    _open_drawer(page)
    _ask(page, "покажи дашборды" if lang == "ru" else "show dashboards")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text(GOOD.title)
    head = page.locator(".thread-head")
    box = head.bounding_box()
    assert box is not None and box["width"] <= PHONE["width"] and box["height"] < 56  # one line
    assert head.evaluate("e => e.scrollWidth <= e.clientWidth")
    expect(page.get_by_test_id("archive")).to_be_hidden()
    # By keyboard: the menu opens on its first item, arrows move, Escape gives focus back.
    toggle = page.get_by_test_id("chat-menu")
    expect(toggle).to_have_attribute("aria-haspopup", "menu")
    toggle.focus()
    page.keyboard.press("Enter")
    menu = page.get_by_role("menu")
    items = menu.get_by_role("menuitem")
    expect(items).to_have_text(MENU[lang])
    for item in items.all():
        expect(item).to_be_in_viewport(ratio=1)
    expect(items.first).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(items.nth(1)).to_be_focused()
    screenshot(page, f"walk-phone-menu-{lang}")
    page.keyboard.press("Escape")
    expect(menu).to_have_count(0)
    expect(toggle).to_be_focused()
    # Export: its panel, on screen.
    toggle.click()
    page.get_by_test_id("menu-export").click()
    expect(page.get_by_test_id("export-panel")).to_be_in_viewport(ratio=1)
    page.keyboard.press("Escape")
    # Archive, then a new conversation, both from the menu.
    toggle.click()
    page.get_by_test_id("menu-archive").click()
    expect(page.get_by_test_id("restore-current")).to_be_visible()
    toggle.click()
    page.get_by_test_id("menu-new").click()
    expect(page.get_by_test_id("composer")).to_be_editable()
    expect(page.get_by_test_id("restore-current")).to_have_count(0)
    assert horizontal_overflow(page) <= 0, page.evaluate(WIDEST)
    screenshot(page, f"walk-phone-header-{lang}")
    context.close()


def test_a_first_sync_makes_one_version_and_the_ids_follow_supersets_order(
    ss_api: httpx.Client,
    ss_as: dict[str, dict[str, str]],
    synced: dict[str, int],
    superset_stack: Stack,
    titles: dict[str, int],
) -> None:
    """Superset lists the last changed dashboard first; the platform numbers them oldest first,
    so on a new platform its ids follow Superset's (the session's first sync), and so do the
    dashboards one later sync brings (the walk's own, built in WALK's order)."""
    assert superset_stack.staging_ids[GOOD.slug] < superset_stack.staging_ids[BROKEN.slug]
    assert synced[GOOD.title] < synced[BROKEN.title]
    assert [titles[spec.title] for spec in WALK] == sorted(titles.values())
    for spec in WALK:  # deploys leave main alone: each still has its first sync's one version
        body = ss_api.get(f"/api/dashboards/{titles[spec.title]}", headers=ss_as["viewer"]).json()
        assert body["main"]["parent_version_id"] is None, (spec.title, body["main"])
        assert body["environments"]["staging"]["version_id"] == body["main_version_id"]
