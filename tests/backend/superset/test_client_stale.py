"""A Superset request that a kept connection failed with no answer (gunicorn closes an idle
keep-alive connection after 2 s, and one it closes just as it is reused gives a read error):
a request that changes nothing is sent once more, a write is not (it may have been done).
No processes: httpx's mock transport stands for Superset."""

from __future__ import annotations

import httpx
import pytest

from backend.config import SupersetInstanceSettings
from backend.superset.client import SupersetClient, SupersetUnavailable

INSTANCE = SupersetInstanceSettings(url="http://superset.test", username="svc", password="pw")


def _client(fail_first: int) -> tuple[SupersetClient, list[str]]:
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        if len(seen) <= fail_first:
            raise httpx.ReadError("connection closed", request=request)
        if request.url.path == "/api/v1/security/login":
            return httpx.Response(200, json={"access_token": "t"})
        if request.url.path == "/api/v1/security/csrf_token/":
            return httpx.Response(200, json={"result": "c"})
        return httpx.Response(200, json={"result": [{"ok": True}]})

    client = SupersetClient("staging", INSTANCE, timeout=5)
    client._http = httpx.AsyncClient(base_url=client.url, transport=httpx.MockTransport(handle))
    return client, seen


async def test_a_read_failed_on_a_kept_connection_is_sent_once_more() -> None:
    client, seen = _client(fail_first=0)
    await client.json("GET", "/api/v1/dashboard/")  # logged in
    del seen[:]
    left = {"n": 1}

    def flaky(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        if left["n"]:
            left["n"] -= 1
            raise httpx.ReadError("connection closed", request=request)
        return httpx.Response(200, json={"result": [{"ok": True}]})

    client._http = httpx.AsyncClient(base_url=client.url, transport=httpx.MockTransport(flaky))
    answer = await client.json("POST", "/api/v1/chart/data", json={"queries": []})
    assert answer == {"result": [{"ok": True}]}
    assert seen == ["POST /api/v1/chart/data"] * 2


async def test_the_login_itself_is_sent_once_more() -> None:
    client, seen = _client(fail_first=1)
    assert await client.json("GET", "/api/v1/dashboard/") == {"result": [{"ok": True}]}
    assert seen[:2] == ["POST /api/v1/security/login"] * 2


async def test_a_write_is_not_sent_again_and_is_unavailable() -> None:
    client, seen = _client(fail_first=0)
    await client.json("GET", "/api/v1/dashboard/")
    del seen[:]

    def closed(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        raise httpx.ReadError("connection closed", request=request)

    client._http = httpx.AsyncClient(base_url=client.url, transport=httpx.MockTransport(closed))
    with pytest.raises(SupersetUnavailable):
        await client.json("POST", "/api/v1/dashboard/import/", files={"formData": b"zip"})
    assert seen == ["POST /api/v1/dashboard/import/"]


async def test_a_read_that_fails_twice_is_unavailable() -> None:
    client, seen = _client(fail_first=10)
    with pytest.raises(SupersetUnavailable):
        await client.json("GET", "/api/v1/dashboard/")
    assert seen == ["POST /api/v1/security/login"] * 2
