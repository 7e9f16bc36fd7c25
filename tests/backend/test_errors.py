"""The one error envelope: validation, unknown routes, values Postgres cannot store, and
unexpected exceptions (500 with a request id and a log line)."""

from __future__ import annotations

import logging
import re
import uuid

import httpx
import pytest
from fastapi import FastAPI

from backend.config import Settings
from backend.main import create_app
from tests.backend.support import NewUser, Person, assert_error, create_conversation, scalar

CONV = "/api/assistant/conversations"


@pytest.fixture(scope="module")
def person(new_user: NewUser) -> Person:
    return new_user(prefix="errors")


def test_a_validation_error_uses_the_envelope_with_field_locations(api, as_user):
    response = api.post(CONV, json={"title": 12}, headers=as_user["viewer"])
    error = assert_error(response, 422, "INVALID_INPUT")
    assert error["message"] == "Request is invalid"
    [problem] = error["details"]["errors"]
    assert problem["loc"] == ["body", "title"] and problem["type"] == "string_type"
    assert set(problem) == {"loc", "msg", "type"}


def test_an_unknown_route_is_404_in_the_envelope(api, as_user):
    assert_error(api.get("/api/no-such-thing", headers=as_user["admin"]), 404, "NOT_FOUND")
    assert_error(api.get("/nowhere"), 404, "NOT_FOUND")


def test_a_wrong_method_is_405_in_the_envelope(api):
    assert_error(api.put("/api/auth/login", json={}), 405, "METHOD_NOT_ALLOWED")


def test_every_response_carries_a_request_id_and_echoes_a_sane_one(api):
    assert len(api.get("/healthz").headers["X-Request-ID"]) == 32
    assert api.get("/healthz", headers={"X-Request-ID": "trace-1"}).headers["X-Request-ID"] == (
        "trace-1"
    )
    replaced = api.get("/healthz", headers={"X-Request-ID": "x" * 65}).headers["X-Request-ID"]
    assert replaced != "x" * 65 and len(replaced) == 32


@pytest.mark.parametrize(
    "body",
    [{"title": "x" * 1_000_000}, {"title": "x" * 201}, {"title": ["a"]}, {"title": {"a": 1}}],
    ids=["1MB", "201_chars", "list", "object"],
)
def test_an_oversized_or_mistyped_title_is_422_and_writes_nothing(api, sql, person, body):
    count = "SELECT count(*) FROM agent_conversations WHERE owner_id = %s"
    audit = "SELECT count(*) FROM assistant_audit WHERE actor_user_id = %s"
    before = scalar(sql, count, person.id), scalar(sql, audit, person.id)
    response = api.post(CONV, json=body, headers=person.headers)
    assert_error(response, 422, "INVALID_INPUT")
    assert len(response.content) < 10_000  # the 1 MB input is not echoed back
    assert (scalar(sql, count, person.id), scalar(sql, audit, person.id)) == before


def test_a_1mb_title_on_rename_is_422_and_keeps_the_old_title(api, sql, person):
    cid = create_conversation(api, person.headers, "old")["id"]
    for title in ("x" * 1_000_000, "", "   \n\t", None, 7):
        response = api.patch(f"{CONV}/{cid}", json={"title": title}, headers=person.headers)
        assert_error(response, 422, "INVALID_INPUT")
    assert scalar(sql, "SELECT title FROM agent_conversations WHERE id = %s", cid) == "old"


@pytest.mark.parametrize(
    "body",
    [
        {"content": "no role"},
        {"role": "user"},
        {"role": "wizard", "content": "x"},
        {"role": "user", "content": 42},
        {"role": "user", "content": "x", "metadata": "not an object"},
        {"role": "user", "content": "x" * 200_001},
        {"role": "user", "content": "x", "metadata": {"blob": "x" * 1_000_001}},
    ],
    ids=["no_role", "no_content", "bad_role", "int_content", "str_metadata", "huge", "meta"],
)
def test_a_bad_message_body_is_422_and_writes_nothing(api, sql, person, body):
    cid = create_conversation(api, person.headers)["id"]
    response = api.post(f"{CONV}/{cid}/messages", json=body, headers=person.agent)
    assert_error(response, 422, "INVALID_INPUT")
    assert scalar(sql, "SELECT count(*) FROM agent_messages WHERE conversation_id = %s", cid) == 0
    assert scalar(sql, "SELECT message_count FROM agent_conversations WHERE id = %s", cid) == 0


@pytest.mark.parametrize(
    ("method", "path", "field"),
    [
        ("post", CONV, "title"),
        ("post", "/api/auth/login", "username"),
        ("post", CONV + "/{cid}/messages", "content"),
        ("post", CONV + "/{cid}/messages", "metadata"),
    ],
    ids=["title", "login", "content", "metadata"],
)
def test_a_nul_character_postgres_cannot_store_is_422_not_500(
    api, sql, person, method, path, field
):
    cid = create_conversation(api, person.headers)["id"]
    bodies = {
        "title": {"title": "bad\x00title"},
        "username": {"username": "ad\x00min", "password": "x"},
        "content": {"role": "user", "content": "nul\x00here"},
        "metadata": {"role": "user", "content": "ok", "metadata": {"k": "v\x00"}},
    }
    url = path.format(cid=cid)
    response = api.request(method, url, json=bodies[field], headers=person.agent)
    assert_error(response, 422, "INVALID_INPUT")
    assert scalar(sql, "SELECT count(*) FROM agent_messages WHERE conversation_id = %s", cid) == 0


# --- unexpected exceptions, in-process with a route that fails --------------------------------


@pytest.fixture()
def failing_app(database_url: str) -> FastAPI:
    app = create_app(Settings(database_url=database_url))

    @app.get("/api/test-boom")
    async def boom() -> None:
        raise RuntimeError("kaboom: internal detail")

    return app


async def test_an_unexpected_exception_is_a_500_with_request_id_header_and_log_line(
    failing_app, caplog
):
    transport = httpx.ASGITransport(app=failing_app, raise_app_exceptions=False)
    caplog.set_level(logging.ERROR, logger="backend.errors")
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
        response = await client.get("/api/test-boom", headers={"X-Request-ID": "req-500"})
        fresh = await client.get("/api/test-boom")
    error = assert_error(response, 500, "INTERNAL")
    assert error["details"] == {"request_id": "req-500"}
    assert response.headers["X-Request-ID"] == "req-500"
    assert "kaboom" not in response.text and "Traceback" not in response.text
    rid = assert_error(fresh, 500, "INTERNAL")["details"]["request_id"]
    assert fresh.headers["X-Request-ID"] == rid and uuid.UUID(hex=rid)
    logged = [r for r in caplog.records if r.name == "backend.errors"]
    assert len(logged) == 2
    assert "request_id=req-500" in logged[0].getMessage()
    assert "/api/test-boom" in logged[0].getMessage()
    assert logged[0].exc_info and "kaboom" in str(logged[0].exc_info[1])


MALFORMED = {
    "not UTF-8": b'{"title": "\xff\xfe"}',
    "not JSON": b"{title: x",
    "too deep": b"[" * 100_000,
}


def _body_operations(spec: dict) -> list[tuple[str, str, str]]:
    """(method, path with every parameter filled, media type) of each operation with a body."""
    found = []
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            for media in operation.get("requestBody", {}).get("content", {}):
                filled = re.sub(r"\{[^}]+\}", "1", path)
                found.append((method, filled, media))
    return found


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_body_is_the_documented_422_envelope_on_every_operation(api, as_user, kind):
    operations = _body_operations(api.get("/openapi.json").json())
    assert len(operations) > 10
    for method, path, media in operations:
        response = api.request(
            method,
            path,
            content=MALFORMED[kind],
            headers={**as_user["admin"], "Content-Type": media},
        )
        error = assert_error(response, 422, "INVALID_INPUT")
        assert error["details"]["errors"][0]["loc"][0] == "body", (method, path, error)
