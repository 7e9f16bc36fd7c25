"""Knowledge base search and reading over real HTTP, in Russian and English."""

from __future__ import annotations

import pytest

from backend.config import Settings
from backend.knowledge.seed import runbooks, seed
from tests.backend.support import assert_error, scalar

SEARCH = "/api/knowledge/search"
ARTICLES = "/api/knowledge/articles"


def _search(api, headers, **params):
    response = api.get(SEARCH, params=params, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["items"]


@pytest.mark.parametrize(
    ("q", "best"),
    [
        ("колонка не найдена", "missing-column-after-rename-ru"),
        ("миграция", "missing-table-pending-migration-ru"),
        ("откат версии", "deploy-and-rollback-ru"),
        ("доступ запрещён", "roles-and-permissions-ru"),
        ("missing column", "missing-column-after-rename-en"),
        ("rollback to a previous version", "deploy-and-rollback-en"),
        ("permission denied", "roles-and-permissions-en"),
        ("chart returns no rows", "chart-returns-no-rows-en"),
        ("inventory_snapshots pending migration", "missing-table-pending-migration-en"),
    ],
)
def test_questions_in_either_language_find_the_matching_runbook_first(api, as_user, q, best):
    items = _search(api, as_user["viewer"], q=q)
    assert items[0]["slug"] == best, [i["slug"] for i in items]
    assert items[0]["lang"] == best[-2:]


def test_results_are_ranked_and_carry_a_highlighted_plain_text_snippet(api, as_user):
    items = _search(api, as_user["viewer"], q="timeout")
    assert items[0]["slug"].startswith("query-timeout-")
    ranks = [i["rank"] for i in items]
    assert ranks == sorted(ranks, reverse=True) and ranks[-1] > 0
    snippet = items[0]["snippet"]
    assert "**timeout**" in snippet.lower()
    assert "<b>" not in snippet and "#" not in snippet and "`" not in snippet
    assert set(items[0]) == {"id", "slug", "title", "lang", "snippet", "rank"}


def test_lang_keeps_only_that_language(api, as_user):
    items = _search(api, as_user["viewer"], q="timeout", lang="en")
    assert items and {i["lang"] for i in items} == {"en"}
    assert _search(api, as_user["viewer"], q="колонка не найдена", lang="en") == []


def test_when_no_article_has_every_word_any_word_still_finds_one(api, as_user):
    items = _search(api, as_user["viewer"], q="rollback xyzzy-never-written")
    assert items and items[0]["slug"] == "deploy-and-rollback-en"


def test_limit_bounds_the_results(api, as_user):
    assert len(_search(api, as_user["viewer"], q="dashboard", limit=2)) == 2
    assert len(_search(api, as_user["viewer"], q="dashboard", limit=10**9)) <= 20


def test_a_hit_opens_the_full_article(api, as_user):
    [hit] = _search(api, as_user["viewer"], q="utm_campaign", lang="en", limit=1)
    response = api.get(f"{ARTICLES}/{hit['id']}", headers=as_user["viewer"])
    assert response.status_code == 200, response.text
    article = response.json()
    assert article["slug"] == "missing-column-after-rename-en"
    assert "utm_campaign" in article["body"] and "deploy" in article["body"]
    assert article["title"] == hit["title"] and "validation" in article["tags"]


def test_the_article_list_holds_every_runbook_in_both_languages(api, as_user):
    body = api.get(ARTICLES, headers=as_user["viewer"]).json()
    assert body["total"] == len(runbooks()) >= 10
    assert {i["lang"] for i in body["items"]} == {"ru", "en"}
    only_ru = api.get(ARTICLES, params={"lang": "ru"}, headers=as_user["viewer"]).json()
    assert only_ru["total"] == body["total"] // 2
    assert all(i["lang"] == "ru" for i in only_ru["items"])


def test_the_agent_searches_on_behalf_of_a_viewer(api, as_agent):
    assert _search(api, as_agent["viewer"], q="deploy")


def test_knowledge_needs_a_signed_in_user(api):
    assert_error(api.get(SEARCH, params={"q": "deploy"}), 401, "UNAUTHORIZED")
    assert_error(api.get(f"{ARTICLES}/1"), 401, "UNAUTHORIZED")


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"q": ""},
        {"q": "   "},
        {"q": "x" * 501},
        {"q": "deploy", "lang": "de"},
        {"q": "a", "limit": 0},
    ],
)
def test_a_missing_blank_or_malformed_query_is_422(api, as_user, params):
    assert_error(api.get(SEARCH, params=params, headers=as_user["viewer"]), 422, "INVALID_INPUT")


def test_an_unknown_article_is_404_and_a_malformed_id_is_422(api, as_user):
    error = assert_error(api.get(f"{ARTICLES}/999999", headers=as_user["viewer"]), 404, "NOT_FOUND")
    assert error["details"] == {"id": 999999}
    for bad in ("0", "abc", "-1", "99999999999"):
        assert_error(api.get(f"{ARTICLES}/{bad}", headers=as_user["viewer"]), 422, "INVALID_INPUT")


@pytest.mark.parametrize(
    "q",
    [
        "'; DROP TABLE knowledge_articles; --",
        "' OR 1=1 --",
        "deploy & | ! <-> :* ( ) \\",
        '"unclosed',
        "the",
    ],
)
def test_query_text_is_searched_as_words_never_run_as_sql(api, as_user, sql, q):
    before = scalar(sql, "SELECT count(*) FROM knowledge_articles")
    items = _search(api, as_user["viewer"], q=q)
    assert len(items) < before
    assert scalar(sql, "SELECT count(*) FROM knowledge_articles") == before


async def test_seeding_twice_keeps_one_row_per_runbook(sql, session):
    ids = scalar(sql, "SELECT array_agg(id ORDER BY slug) FROM knowledge_articles")
    await seed(session=session, settings=Settings())
    await session.commit()
    assert scalar(sql, "SELECT array_agg(id ORDER BY slug) FROM knowledge_articles") == ids
    assert len(ids) == len(runbooks())
