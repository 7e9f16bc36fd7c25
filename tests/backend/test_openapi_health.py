"""Liveness and readiness, and an OpenAPI document that is complete for every /api route."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from backend.config import Settings
from backend.main import create_app
from tests.backend.support import assert_error
from tests.support.processes import free_port

ERROR_REF = "#/components/schemas/ErrorResponse"
CONV = "/api/assistant/conversations/{conversation_id}"
AGENT = "/api/agent/conversations/{conversation_id}"
# The core routes and the error statuses each must document, exactly.
CORE_ERRORS = {
    ("post", "/api/auth/login"): {401, 422},
    ("get", "/api/auth/me"): {401, 422},
    ("post", "/api/auth/service-token"): {401, 422},
    ("post", "/api/admin/users"): {401, 403, 409, 422},
    ("get", "/api/audit"): {401, 403, 422},
    ("post", "/api/assistant/conversations"): {401, 422},
    ("get", "/api/assistant/conversations"): {401, 422},
    ("get", CONV): {401, 404, 422},
    ("patch", CONV): {401, 404, 422},
    ("delete", CONV): {401, 404, 409, 422},
    ("get", CONV + "/history"): {401, 404, 422},
    ("post", CONV + "/restore"): {401, 404, 422},
    ("post", CONV + "/messages"): {401, 403, 404, 409, 422},
    ("get", AGENT + "/active"): {401, 404, 422},
    ("put", AGENT + "/lease"): {401, 403, 404, 409, 422},
    ("delete", AGENT + "/lease"): {401, 403, 404, 422},
    ("post", AGENT + "/end"): {401, 403, 404, 422},
}


def test_healthz_and_readyz_answer_when_the_database_is_up(api):
    assert api.get("/healthz").json() == {"status": "ok"}
    assert api.get("/readyz").json() == {"status": "ready"}


async def test_readyz_is_503_in_the_envelope_when_the_database_is_unreachable():
    dead = f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"
    app = create_app(Settings(database_url=dead))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
            assert (await client.get("/healthz")).json() == {"status": "ok"}
            assert_error(await client.get("/readyz"), 503, "UNAVAILABLE")


@pytest.fixture(scope="module")
def spec(backend_url: str) -> dict[str, Any]:
    return dict(httpx.get(backend_url + "/openapi.json").json())


def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec["paths"].items():
        if path.startswith("/api/"):
            for method, operation in item.items():
                yield method, path, operation


def _role_guarded(dependant: Dependant) -> bool:
    """True when a require(...) role check or the agent-only check sits in the dependency tree."""
    for sub in dependant.dependencies:
        name = getattr(sub.call, "__qualname__", "")
        if name.startswith("require.") or name == "require_service" or _role_guarded(sub):
            return True
    return False


def _guarded_routes(database_url: str) -> set[tuple[str, str]]:
    app = create_app(Settings(database_url=database_url))
    return {
        (method.lower(), route.path)
        for route in app.routes
        if isinstance(route, APIRoute) and _role_guarded(route.dependant)
        for method in route.methods
    }


def test_every_api_route_documents_a_2xx_body_schema(spec):
    for method, path, operation in _operations(spec):
        ok = {s: r for s, r in operation["responses"].items() if s.startswith("2")}
        if not ok and "302" in operation["responses"]:
            continue  # a redirect (the OIDC login and callback): its answer is a Location
        assert ok, (method, path)
        for status, response in ok.items():
            if status == "204":
                assert "content" not in response, (method, path)
                continue
            # JSON when the route answers JSON; a download (JSON Lines, Markdown) its own type
            content = response["content"]
            media = "application/json" if "application/json" in content else next(iter(content))
            schema = content[media].get("schema")
            assert schema not in ({}, None), f"{method.upper()} {path} has no response schema"


def test_every_api_route_documents_its_errors_in_the_envelope(spec, database_url):
    guarded = _guarded_routes(database_url)
    for method, path, operation in _operations(spec):
        where = f"{method.upper()} {path}"
        errors = {int(s): r for s, r in operation["responses"].items() if s[0] in "45"}
        for status, response in errors.items():
            schema = response["content"]["application/json"]["schema"]
            assert schema == {"$ref": ERROR_REF}, f"{where} {status} is not the envelope"
        if operation.get("security"):
            assert 401 in errors, f"{where} takes a token but does not document 401"
        if operation.get("parameters") or operation.get("requestBody"):
            assert 422 in errors, f"{where} takes input but does not document 422"
        if (method, path) in guarded:
            assert 403 in errors, f"{where} checks a role but does not document 403"
        if "{" in path:
            assert 404 in errors, f"{where} takes an id but does not document 404"


def test_the_core_routes_document_exactly_their_error_statuses(spec):
    documented = {
        (method, path): {int(s) for s in op["responses"] if s[0] in "45"}
        for method, path, op in _operations(spec)
    }
    for key, statuses in CORE_ERRORS.items():
        assert documented.get(key) == statuses, key


def test_no_route_advertises_fastapis_default_validation_body(spec):
    assert "HTTPValidationError" not in str(spec["paths"])


def test_every_operation_with_a_body_says_a_malformed_one_is_the_422_envelope(spec):
    bodies = [(m, p, op) for m, p, op in _operations(spec) if "requestBody" in op]
    assert len(bodies) > 10
    for method, path, operation in bodies:
        invalid = operation["responses"]["422"]
        assert "cannot be parsed" in invalid["description"], (method, path)
        assert invalid["content"]["application/json"]["schema"] == {"$ref": ERROR_REF}
