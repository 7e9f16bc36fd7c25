"""Searching and reading dashboards over HTTP."""

from __future__ import annotations

import pytest

from tests.backend.support import assert_error


def ids(api, headers, **params) -> list[int]:
    response = api.get("/api/dashboards", params=params, headers=headers)
    assert response.status_code == 200, response.text
    return [item["id"] for item in response.json()["items"]]


def ids_total(api, headers) -> int:
    return int(api.get("/api/dashboards", headers=headers).json()["total"])


def test_search_finds_dashboards_by_english_title_words(api, as_user):
    found = ids(api, as_user["viewer"], query="sales overview")
    assert found[0] == 42


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("регионам", 3),  # a word of a Russian title
        ("Продажи по регионам", 3),  # case and several words
        ("средний чек", 58),
        ("остатки", 23),  # a word of a Russian description
    ],
)
def test_search_finds_dashboards_by_russian_words(api, as_user, query, expected):
    assert expected in ids(api, as_user["viewer"], query=query)


def test_a_word_prefix_matches_longer_forms(api, as_user):
    # "продаж" is the stem of "продажи" (a tag of 42) and "Продажи" (the title of 3).
    found = ids(api, as_user["viewer"], query="продаж")
    assert {3, 42} <= set(found)
    assert 17 not in found


def test_search_finds_dashboards_by_tag_words_and_by_exact_tag(api, as_user):
    assert ids(api, as_user["viewer"], query="склад") == [23]
    by_tag = ids(api, as_user["viewer"], tag="marketing")
    assert set(by_tag) >= {17, 31}
    assert 42 not in by_tag


def test_a_query_without_words_matches_nothing(api, as_user):
    body = api.get("/api/dashboards", params={"query": "!!! ???"}, headers=as_user["viewer"])
    assert body.json() == {"items": [], "total": 0}


def test_listing_pages_with_a_total_and_describes_each_item(api, as_user):
    response = api.get(
        "/api/dashboards", params={"limit": 2, "offset": 1}, headers=as_user["viewer"]
    )
    body = response.json()
    assert body["total"] >= 12 and len(body["items"]) == 2
    item = body["items"][0]
    assert set(item) == {
        "id", "title", "description", "tags", "owner", "main_version_id", "status",
        "last_validated_at", "environments",
    }  # fmt: skip
    assert item["status"] in {"ok", "warning", "failing", "unknown"}
    production = item["environments"]["production"]
    assert production["version_id"] and production["environment"] == "production"


def test_an_unknown_status_or_environment_is_rejected(api, as_user):
    response = api.get("/api/dashboards", params={"status": "broken"}, headers=as_user["viewer"])
    assert_error(response, 422, "INVALID_INPUT")
    response = api.get("/api/dashboards", params={"environment": "qa"}, headers=as_user["viewer"])
    assert_error(response, 422, "INVALID_INPUT")


def test_search_needs_a_signed_in_user(api):
    assert_error(api.get("/api/dashboards"), 401, "UNAUTHORIZED")


def test_status_filter_follows_the_latest_validation(api, as_user, inventory_pending):
    for dashboard_id in (17, 23, 42):
        response = api.post(f"/api/dashboards/{dashboard_id}/validate", headers=as_user["viewer"])
        assert response.status_code == 200, response.text
    failing = ids(api, as_user["viewer"], status="failing", limit=200)
    ok = ids(api, as_user["viewer"], status="ok", limit=200)
    assert 17 in failing and 17 not in ok
    assert 42 in ok and 42 not in failing
    assert 23 in failing  # it reads a table a pending datasource migration creates
    assert len(failing) + len(ok) < ids_total(api, as_user["viewer"])  # warning, unknown exist


def test_the_agent_searches_with_the_users_identity(api, as_agent):
    response = api.get("/api/dashboards", params={"query": "funnel"}, headers=as_agent["viewer"])
    assert [i["id"] for i in response.json()["items"]] == [17]


def test_reading_a_dashboard_shows_main_branches_environments_and_validation(api, as_user):
    api.post("/api/dashboards/42/validate", headers=as_user["viewer"])
    body = api.get("/api/dashboards/42", headers=as_user["viewer"]).json()
    assert body["title"] == "Sales overview"
    keys = [c["key"] for c in body["main"]["definition"]["charts"]]
    assert {"revenue_by_month", "top_products", "orders_by_status"} <= set(keys)
    assert body["main"]["id"] == body["main_version_id"]
    assert body["environments"]["production"]["version_id"] == body["main_version_id"]
    assert body["environments"]["staging"]["is_main"] is True
    assert body["status"] == "ok" and body["latest_validation"]["status"] == "ok"
    assert isinstance(body["branches"], list)


@pytest.mark.parametrize(
    "path",
    [
        "/api/dashboards/999999",
        "/api/dashboards/42/versions/999999",
        "/api/dashboards/999999/health",
        "/api/dashboards/999999/deployments",
        "/api/dashboards/999999/branches",
    ],
)
def test_unknown_dashboards_and_versions_are_not_found(api, as_user, path):
    assert_error(api.get(path, headers=as_user["viewer"]), 404, "NOT_FOUND")


def test_a_non_numeric_or_huge_dashboard_id_is_invalid_input(api, as_user):
    for bad in ("abc", "99999999999"):
        response = api.get(f"/api/dashboards/{bad}", headers=as_user["viewer"])
        assert_error(response, 422, "INVALID_INPUT")
