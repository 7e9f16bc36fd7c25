"""Charts on dashboards, tool results by kind and chart answers, at 1400 and 390 px wide."""

from __future__ import annotations

import json
from typing import Any

import httpx
from playwright.sync_api import Locator, Page, expect

from tests.e2e.checks import horizontal_overflow
from tests.e2e.conftest import login, open_chat, screenshot, send, width_of
from tests.fakes.llm_server import FakeLLM

BY_STATUS = "SELECT status, COUNT(*) AS orders FROM orders GROUP BY status ORDER BY orders DESC"
BY_MONTH = (
    "SELECT strftime('%Y-%m', order_date) AS month, ROUND(SUM(total_amount), 2) AS revenue "
    "FROM orders GROUP BY month ORDER BY month"
)


def query(api: httpx.Client, headers: dict[str, str], sql: str) -> dict[str, Any]:
    response = api.post("/api/datasources/sample/query", json={"sql": sql}, headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


def marks(chart: Locator) -> int:
    """Drawn shapes (bars, lines, slices, dots) in a chart's SVG."""
    return chart.locator(".svg svg").locator("rect, path, circle").count()


def test_dashboard_42_draws_each_of_its_charts(sized_page: Page) -> None:
    page = sized_page
    login(page)
    page.goto("/dashboards/42")
    cards = page.get_by_test_id("dashboard-chart")
    expect(cards).to_have_count(4)
    for key, kind in [
        ("revenue_by_month", "line"),
        ("top_products", "bar"),
        ("orders_by_status", "pie"),
        ("revenue_by_category", "bar"),
    ]:
        card = page.locator(f'[data-testid="dashboard-chart"][data-chart-key="{key}"]')
        chart = card.get_by_test_id("chart")
        expect(chart).to_have_attribute("data-state", "drawn")
        expect(chart).to_have_attribute("data-kind", kind)
        svg = chart.locator(".svg svg")
        expect(svg).to_have_attribute("role", "img")
        assert "rows" in (svg.get_attribute("aria-label") or "")
        assert marks(chart) > 3, key
    pie = page.locator('[data-chart-key="orders_by_status"]')
    expect(pie.locator(".legend li").first).to_contain_text("%")
    assert horizontal_overflow(page) <= 0
    page.locator('[data-chart-key="top_products"]').get_by_test_id("chart-toggle").click()
    expect(
        page.locator('[data-chart-key="top_products"]').get_by_test_id("data-table")
    ).to_be_visible()
    screenshot(page, f"dashboard-42-charts-{width_of(page)}")


def test_dashboard_17_shows_the_error_of_its_failing_chart(sized_page: Page) -> None:
    page = sized_page
    login(page)
    page.goto("/dashboards/17")
    broken = page.locator('[data-chart-key="conversions_by_campaign"]')
    expect(broken).to_have_attribute("data-state", "error")
    error = broken.get_by_test_id("chart-error")
    expect(error).to_have_attribute("data-code", "SQL_ERROR")
    expect(error).to_contain_text("campaign_id")
    healthy = page.locator('[data-chart-key="events_by_type"]').get_by_test_id("chart")
    expect(healthy).to_have_attribute("data-state", "drawn")
    assert horizontal_overflow(page) <= 0
    broken.scroll_into_view_if_needed()
    screenshot(page, f"dashboard-17-error-{width_of(page)}")


def test_a_sql_answer_is_a_table_that_copies_as_csv_and_turns_into_a_chart(
    sized_page: Page, llm: FakeLLM, api: httpx.Client, as_user: dict[str, dict[str, str]]
) -> None:
    page = sized_page
    expected = query(api, as_user["admin"], BY_STATUS)
    llm.enqueue(
        {
            "tool_calls": [
                {"name": "execute_sql", "args": {"datasource": "sample", "query": BY_STATUS}}
            ]
        },
        {"text": "Orders by status are in the table above."},
    )
    login(page)
    open_chat(page)
    send(page, "How many orders per status?")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("in the table above")
    expect(page.get_by_test_id("send")).to_be_visible()  # the turn is over: the DOM is final

    result = page.get_by_test_id("sql-result")
    expect(result).to_have_attribute("data-view", "table")
    table = result.get_by_test_id("data-table")
    expect(table.locator("th")).to_have_text(["status", "orders"])
    expect(table.locator("tbody tr")).to_have_count(len(expected["rows"]))
    expect(table.locator("tbody tr").first.locator("td").first).to_have_text(expected["rows"][0][0])
    number = table.locator("tbody tr").first.locator("td").nth(1)
    assert number.evaluate("td => getComputedStyle(td).textAlign") == "right"
    header = table.locator("th").first
    assert header.evaluate("th => getComputedStyle(th).position") == "sticky"
    screenshot(page, f"sql-answer-table-{width_of(page)}")

    result.get_by_test_id("copy-csv").click()
    expect(result.get_by_test_id("copy-csv")).to_have_attribute("data-state", "copied")
    csv = page.evaluate("navigator.clipboard.readText()")
    lines = csv.split("\r\n")
    assert lines[0] == "status,orders"
    assert lines[1] == f"{expected['rows'][0][0]},{expected['rows'][0][1]}"
    assert len([line for line in lines if line]) == len(expected["rows"]) + 1

    result.get_by_test_id("view-chart").click()
    chart = result.get_by_test_id("chart")
    expect(chart).to_have_attribute("data-kind", "bar")  # one text column and one number
    expect(chart).to_have_attribute("data-state", "drawn")
    assert marks(chart) >= len(expected["rows"])
    assert horizontal_overflow(page) <= 0
    screenshot(page, f"sql-answer-chart-{width_of(page)}")

    card = page.locator('[data-testid="tool-card"][data-tool="execute_sql"]')
    card.locator("button.head").click()
    raw = card.get_by_test_id("tool-details").locator("pre").nth(1)
    assert json.loads(raw.inner_text())["columns"] == ["status", "orders"]


def test_an_answer_with_a_chart_block_is_drawn_and_a_bad_block_stays_code(
    sized_page: Page, llm: FakeLLM, api: httpx.Client, as_user: dict[str, dict[str, str]]
) -> None:
    page = sized_page
    rows = query(api, as_user["admin"], BY_MONTH)["rows"]
    spec = {
        "kind": "line",
        "title": "Revenue by month",
        "columns": ["month", "revenue"],
        "rows": rows,
    }
    bad = {"kind": "radar", "columns": ["a"], "rows": [["x"]]}
    text = (
        f"Revenue by month:\n\n```chart\n{json.dumps(spec)}\n```\n\n"
        f"And this one is not valid:\n\n```chart\n{json.dumps(bad)}\n```"
    )
    llm.enqueue({"text": text})
    login(page)
    open_chat(page)
    send(page, "show revenue by month as a chart")
    expect(page.get_by_test_id("send")).to_be_visible()

    drawn = page.get_by_test_id("answer-chart").get_by_test_id("chart")
    expect(drawn).to_have_attribute("data-state", "drawn")
    expect(drawn).to_have_attribute("data-kind", "line")
    expect(drawn.locator("figcaption")).to_have_text("Revenue by month")
    assert marks(drawn) >= len(rows)
    answer = page.get_by_test_id("assistant-message")
    expect(answer.locator("pre code")).to_contain_text('"radar"')
    assert horizontal_overflow(page) <= 0
    screenshot(page, f"chart-answer-{width_of(page)}")


def test_health_and_file_results_are_shown_by_kind(sized_page: Page, llm: FakeLLM) -> None:
    page = sized_page
    llm.enqueue(
        {
            "tool_calls": [
                {"name": "dashboard_health", "args": {"dashboard_id": 17}},
                {"name": "read_file", "args": {"key": "exports/sales_2026_10.csv"}},
            ]
        },
        {"text": "Dashboard 17 has a failing chart; the export is above."},
    )
    login(page)
    page.goto("/dashboards/17")  # validated once, so health has a latest run
    open_chat(page)
    send(page, "Check dashboard 17 and show the October export")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("export is above")
    expect(page.get_by_test_id("send")).to_be_visible()

    health = page.get_by_test_id("health-result")
    failing = health.locator('[data-testid="health-chart"][data-status="failing"]')
    expect(failing).to_have_count(1)
    expect(failing).to_contain_text("campaign_id")
    file = page.get_by_test_id("file-result")
    expect(file).to_have_attribute("data-kind", "csv")
    assert file.locator(".tok-field").count() > 10
    assert file.locator("script, img").count() == 0
    assert horizontal_overflow(page) <= 0
    screenshot(page, f"health-and-file-results-{width_of(page)}")
