"""Searching conversations over HTTP: own conversations only, by title and message text, in
Russian and English, paginated, on the full-text indexes."""

from __future__ import annotations

import psycopg
import pytest

from tests.backend.support import NewUser, Person, append, assert_error, create_conversation

BASE = "/api/assistant/conversations"


def find(api, person: Person, q: str, **params):
    response = api.get(BASE, params={"q": q, **params}, headers=person.headers)
    assert response.status_code == 200, response.text
    return response.json()


def ids(page) -> list[str]:
    return [c["id"] for c in page["items"]]


@pytest.fixture()
def person(new_user: NewUser) -> Person:
    return new_user("viewer", prefix="search")


def test_a_word_in_a_message_finds_its_conversation_with_a_snippet(api, person):
    revenue = create_conversation(api, person.headers)["id"]
    append(api, person.agent, revenue, "Show revenue by month as a chart")
    append(api, person.agent, revenue, "Revenue grew every month of the year.", role="assistant")
    other = create_conversation(api, person.headers)["id"]
    append(api, person.agent, other, "Which dashboards are failing?")

    page = find(api, person, "grew")
    assert ids(page) == [revenue] and page["total"] == 1
    assert "grew every month" in page["items"][0]["snippet"]
    assert set(page["items"][0]) >= {"id", "title", "updated_at", "message_count", "snippet"}
    assert ids(find(api, person, "failing")) == [other]


def test_every_word_must_match_and_words_match_as_prefixes(api, person):
    cid = create_conversation(api, person.headers)["id"]
    append(api, person.agent, cid, "Почему дашборды маркетинга падают?")
    assert ids(find(api, person, "дашборд")) == [cid]  # prefix of "дашборды"
    assert ids(find(api, person, "ДАШБОРДЫ маркет")) == [cid]  # case-folded, both words
    assert ids(find(api, person, "дашборды продажи")) == []  # the second word is absent


def test_a_title_matches_without_any_message_and_has_no_snippet(api, person):
    cid = create_conversation(api, person.headers, "Quarterly numbers")["id"]
    page = find(api, person, "quarterly")
    assert ids(page) == [cid] and page["items"][0]["snippet"] is None


def test_another_users_conversations_never_match(api, person, new_user, as_user):
    stranger = new_user("viewer", prefix="search")
    theirs = create_conversation(api, stranger.headers, "zebracorn secrets")["id"]
    append(api, stranger.agent, theirs, "the zebracorn launch plan")
    mine = create_conversation(api, person.headers)["id"]
    append(api, person.agent, mine, "nothing about that animal")

    assert find(api, person, "zebracorn") == {"items": [], "total": 0}
    assert ids(find(api, stranger, "zebracorn")) == [theirs]
    admin = api.get(BASE, params={"q": "zebracorn"}, headers=as_user["admin"])
    assert admin.status_code == 200 and admin.json()["total"] == 0  # admins are no exception


def test_results_are_paginated_newest_activity_first(api, person):
    made = []
    for n in range(5):
        cid = create_conversation(api, person.headers)["id"]
        append(api, person.agent, cid, f"budget review number {n}")
        made.append(cid)
    first = find(api, person, "budget", limit=2)
    second = find(api, person, "budget", limit=2, offset=2)
    rest = find(api, person, "budget", limit=2, offset=4)
    assert first["total"] == second["total"] == rest["total"] == 5
    assert ids(first) + ids(second) + ids(rest) == list(reversed(made))


def test_search_respects_the_archived_filter(api, person):
    cid = create_conversation(api, person.headers)["id"]
    append(api, person.agent, cid, "archived flamingo talk")
    assert api.delete(f"{BASE}/{cid}", headers=person.headers).status_code == 204
    assert find(api, person, "flamingo")["total"] == 0
    assert ids(find(api, person, "flamingo", archived="true")) == [cid]


def test_query_syntax_is_not_interpreted_and_bad_queries_are_clear(api, person):
    cid = create_conversation(api, person.headers)["id"]
    append(api, person.agent, cid, "select revenue from orders")
    # tsquery operators in the input are ordinary punctuation, never query syntax.
    assert ids(find(api, person, "revenue & !orders | (x")) == []
    assert ids(find(api, person, "revenue: orders!")) == [cid]
    assert find(api, person, "!!! ??? ...") == {"items": [], "total": 0}
    assert_error(api.get(BASE, params={"q": ""}, headers=person.headers), 422, "INVALID_INPUT")
    too_long = api.get(BASE, params={"q": "a" * 201}, headers=person.headers)
    assert_error(too_long, 422, "INVALID_INPUT")


def test_a_plain_list_has_no_snippet_field(api, person):
    create_conversation(api, person.headers, "plain")
    items = api.get(BASE, headers=person.headers).json()["items"]
    assert items and all("snippet" not in item for item in items)


@pytest.mark.parametrize(
    ("table", "column", "index"),
    [
        ("agent_messages", "content", "ix_agent_messages_content_search"),
        ("agent_conversations", "title", "ix_agent_conversations_title_search"),
    ],
)
def test_the_search_expression_is_served_by_its_gin_index(sql, table, column, index):
    with sql.transaction(force_rollback=True):
        sql.execute("SET LOCAL enable_seqscan = off")
        plan = _plan(
            sql,
            f"SELECT 1 FROM {table} "
            f"WHERE to_tsvector('simple'::regconfig, {column}) "
            "@@ to_tsquery('simple'::regconfig, 'revenue:*')",
        )
    assert index in plan


def _plan(sql: psycopg.Connection, query: str) -> str:
    return "\n".join(row[0] for row in sql.execute(f"EXPLAIN {query}"))
