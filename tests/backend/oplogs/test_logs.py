"""GET /api/logs over real HTTP on the seeded two-week history, and oplogs.service.write."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backend.config import Settings
from backend.oplogs import service
from backend.oplogs.seed import seed
from tests.backend.support import assert_error, scalar

LOGS = "/api/logs"


def _get(api, headers, **params):
    response = api.get(LOGS, params=params, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_viewer_finds_the_marketing_funnel_failure_by_column_name(api, as_user):
    body = _get(api, as_user["viewer"], query="campaign_id", dashboard_id=17, level="error")
    assert body["total"] >= 10
    assert {item["dashboard_id"] for item in body["items"]} == {17}
    assert all("no such column: campaign_id" in i["message"] for i in body["items"])
    assert {i["source"] for i in body["items"]} == {"dashboards.validation"}
    charts = {i["details"].get("chart_key") for i in body["items"]}
    assert "conversions_by_campaign" in charts


def test_inventory_errors_name_the_missing_table_and_the_pending_migration(api, as_user):
    body = _get(api, as_user["viewer"], query='"no such table" inventory_snapshots')
    assert body["total"] > 0
    assert all(item["dashboard_id"] == 23 for item in body["items"])
    seeded = [i for i in body["items"] if "pending_migration" in i["details"]]
    assert seeded[0]["details"]["pending_migration"] == "20261101_inventory_snapshots"
    pending = _get(api, as_user["viewer"], query="pending 20261101_inventory_snapshots")
    assert pending["total"] > 0 and pending["items"][0]["source"] == "datasources"


def test_words_match_by_english_stem_so_timeouts_finds_timeout(api, as_user):
    body = _get(api, as_user["viewer"], query="timeouts")
    assert body["total"] >= 5
    assert all("timeout" in item["message"].lower() for item in body["items"])


def test_dashboard_42_deployments_are_in_the_history(api, as_user):
    body = _get(
        api, as_user["viewer"], source="dashboards.deployment", dashboard_id=42, query="production"
    )
    seeded = [i["details"]["version_id"] for i in body["items"] if i["details"].get("demo")]
    assert len(seeded) >= 4 and seeded[0] == max(seeded)


def test_entries_come_newest_first_and_pages_do_not_overlap(api, as_user):
    first = _get(api, as_user["viewer"], limit=20, offset=0)
    second = _get(api, as_user["viewer"], limit=20, offset=20)
    assert first["total"] == second["total"] >= 250
    stamps = [i["created_at"] for i in first["items"] + second["items"]]
    assert stamps == sorted(stamps, reverse=True)
    assert not {i["id"] for i in first["items"]} & {i["id"] for i in second["items"]}


def test_level_means_this_level_or_more_severe(api, as_user):
    warning = _get(api, as_user["viewer"], level="warning", limit=200)
    assert {i["level"] for i in warning["items"]} == {"warning", "error"}
    error = _get(api, as_user["viewer"], level="error", limit=200)
    assert {i["level"] for i in error["items"]} == {"error"}
    everything = _get(api, as_user["viewer"], level="debug", limit=1)
    assert everything["total"] == _get(api, as_user["viewer"], limit=1)["total"]
    assert error["total"] < warning["total"] < everything["total"]


def test_since_is_inclusive_until_exclusive_and_naive_times_are_utc(api, as_user):
    now = datetime.now(UTC)
    since, until = now - timedelta(days=2), now - timedelta(days=1)
    body = _get(api, as_user["viewer"], since=since.isoformat(), until=until.isoformat())
    assert 0 < body["total"] < _get(api, as_user["viewer"], limit=1)["total"]
    for item in body["items"]:
        assert since <= datetime.fromisoformat(item["created_at"]) < until
    naive = since.replace(tzinfo=None).isoformat()
    assert (
        _get(api, as_user["viewer"], since=naive, until=until.isoformat())["total"]
        == (body["total"])
    )


def test_the_agent_reads_logs_on_behalf_of_a_viewer(api, as_agent):
    assert _get(api, as_agent["viewer"], query="logged in", limit=1)["total"] > 0


def test_logs_need_a_signed_in_user(api):
    assert_error(api.get(LOGS), 401, "UNAUTHORIZED")


@pytest.mark.parametrize(
    "params",
    [
        {"level": "fatal"},
        {"level": "ERROR "},
        {"since": "yesterday"},
        {"until": "2026-13-45T00:00:00"},
        {"since": "2026-11-20T00:00:00Z", "until": "2026-11-10T00:00:00Z"},
        {"dashboard_id": "0"},
        {"dashboard_id": "seventeen"},
        {"dashboard_id": "99999999999"},
        {"limit": "0"},
        {"offset": "-1"},
        {"query": "x" * 501},
    ],
)
def test_bad_filters_are_refused_with_the_envelope(api, as_user, params):
    assert_error(api.get(LOGS, params=params, headers=as_user["viewer"]), 422, "INVALID_INPUT")


def test_since_after_until_names_both_bounds(api, as_user):
    params = {"since": "2026-11-20T00:00:00Z", "until": "2026-11-10T00:00:00Z"}
    error = assert_error(
        api.get(LOGS, params=params, headers=as_user["viewer"]), 422, "INVALID_INPUT"
    )
    assert set(error["details"]) == {"since", "until"}


def test_a_huge_limit_is_capped_at_the_page_maximum(api, as_user):
    body = _get(api, as_user["viewer"], limit=10**12)
    assert body["total"] > 200 and len(body["items"]) == 200


@pytest.mark.parametrize(
    "text",
    [
        "'; DROP TABLE operational_logs; --",
        "1' OR '1'='1",
        "' UNION SELECT password_hash FROM users --",
        "campaign_id & | ! <-> :* ( ) \\",
        '"unclosed phrase',
        "-",
        "%_%",
    ],
)
def test_query_text_is_searched_as_words_never_run_as_sql(api, as_user, sql, text):
    before = scalar(sql, "SELECT count(*) FROM operational_logs")
    body = _get(api, as_user["viewer"], query=text)
    assert body["total"] < before  # a filter, never "everything"
    assert scalar(sql, "SELECT count(*) FROM operational_logs") == before


async def test_write_adds_an_entry_that_the_api_then_finds(api, as_user, session):
    service.write(
        session=session,
        level="error",
        source="deployment",
        message="Deployment of dashboard 7 failed: zebra-unicorn-marker",
        dashboard_id=7,
        details={"environment": "staging"},
    )
    await session.commit()
    [item] = _get(api, as_user["viewer"], query="zebra-unicorn-marker")["items"]
    assert item["dashboard_id"] == 7 and item["details"] == {"environment": "staging"}
    assert item["level"] == "error" and item["source"] == "deployment"


async def test_write_refuses_an_unknown_level_and_a_missing_source(session):
    with pytest.raises(ValueError, match="unknown log level"):
        service.write(session=session, level="fatal", source="sql", message="x")
    with pytest.raises(ValueError, match="source"):
        service.write(session=session, level="info", source="", message="x")
    assert not session.new


async def test_seeding_twice_adds_nothing(sql, session):
    before = scalar(
        sql, "SELECT count(*) FROM operational_logs WHERE details @> '{\"demo\": true}'"
    )
    await seed(session=session, settings=Settings())
    await session.commit()
    after = scalar(sql, "SELECT count(*) FROM operational_logs WHERE details @> '{\"demo\": true}'")
    assert after == before >= 250
