"""The nginx gateway, over plain HTTP: routing, security headers, upload size, Authorization."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import PASSWORDS


@pytest.fixture(scope="module")
def http(gateway: str) -> httpx.Client:
    with httpx.Client(base_url=gateway, timeout=20) as client:
        yield client


@pytest.fixture(scope="module")
def token(http: httpx.Client) -> str:
    body = {"username": "viewer", "password": PASSWORDS["viewer"]}
    response = http.post("/api/auth/login", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


def test_client_routes_serve_the_app_with_security_headers(http: httpx.Client) -> None:
    for path in ("/", "/login", "/dashboards/42", "/chat"):
        response = http.get(path)
        assert response.status_code == 200, path
        assert '<div id="app">' in response.text
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp
        assert "frame-ancestors 'self'" in csp
        assert "unsafe-inline" not in csp
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "same-origin"
        assert response.headers["cache-control"] == "no-cache"


def test_built_assets_are_long_cached_and_keep_the_security_headers(http: httpx.Client) -> None:
    index = http.get("/").text
    script = index.split('src="', 1)[1].split('"', 1)[0]
    assert script.startswith("/assets/")
    response = http.get(script, headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200
    assert "max-age=31536000" in response.headers["cache-control"]
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert http.get("/assets/missing.js").status_code == 404


def test_api_calls_reach_the_backend_with_the_callers_authorization(
    http: httpx.Client, token: str
) -> None:
    me = http.get("/api/auth/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200
    assert me.json()["username"] == "viewer"
    refused = http.get("/api/auth/me")
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "UNAUTHORIZED"
    assert "content-security-policy" in refused.headers  # `always`: on errors too


def test_the_agent_is_reached_under_its_mount_and_checks_the_token(
    http: httpx.Client, token: str, gateway: str
) -> None:
    refused = http.get("/api/agent/gradio/config")
    assert refused.status_code == 401
    config = http.get("/api/agent/gradio/config", headers={"Authorization": f"Bearer {token}"})
    assert config.status_code == 200
    # Gradio builds its root from the Host nginx passes on: the browser's own address.
    assert config.json()["root"].rstrip("/") == f"{gateway}/api/agent/gradio"


def test_uploads_over_eleven_megabytes_are_refused_by_the_gateway(
    http: httpx.Client, token: str
) -> None:
    big = b"x" * (12 * 1024 * 1024)
    response = http.post(
        "/api/agent/gradio/gradio_api/upload",
        headers={"Authorization": f"Bearer {token}"},
        files={"files": ("big.csv", big, "text/csv")},
    )
    assert response.status_code == 413
