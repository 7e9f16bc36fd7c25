"""Password checks run off the backend's event loop: while argon2 works on a burst of logins
(or service-token requests), other requests keep being answered. bench/login_burst.py has the
figures; here the check is only whether /healthz gets through at all during the checks."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import psycopg
import pytest
from argon2 import PasswordHasher

# The cost lives in the hash, so a row with this hash makes one check take a third of a second
# to a second here (the default cost is t=3): long enough that a blocked loop could not hide
# between checks. One lane: each check is one thread, so the burst's checks alone (the backend
# runs two at once) cannot crowd the loop's thread off a two-core machine the suite also loads.
SLOW = PasswordHasher(time_cost=12, parallelism=1)
BURST = 4


def _slow_user(sql: psycopg.Connection, password: str) -> dict[str, str]:
    username = f"slow_{uuid.uuid4().hex[:10]}"
    sql.execute(
        "INSERT INTO users (id, username, password_hash, roles, is_active, created_at, updated_at)"
        " VALUES (%s, %s, %s, ARRAY['viewer'], true, now(), now())",
        (uuid.uuid4(), username, SLOW.hash(password)),
    )
    return {"path": "/api/auth/login", "username": username, "password": password}


def _slow_client(sql: psycopg.Connection, secret: str) -> dict[str, str]:
    client_id = f"slow_{uuid.uuid4().hex[:10]}"
    sql.execute(
        "INSERT INTO service_clients (id, client_id, secret_hash, description, is_active,"
        " created_at, updated_at) VALUES (%s, %s, %s, 'slow test client', true, now(), now())",
        (uuid.uuid4(), client_id, SLOW.hash(secret)),
    )
    return {"path": "/api/auth/service-token", "client_id": client_id, "client_secret": secret}


def _burst(backend_url: str, request: dict[str, str]) -> tuple[float, float, list[float]]:
    """Send BURST requests at once and poll /healthz until they are all answered; returns the
    burst's start, the moment its first answer arrived, and when each /healthz answer came."""
    path, body = request["path"], {k: v for k, v in request.items() if k != "path"}
    done = threading.Event()
    answered: list[float] = []

    def one(client: httpx.Client) -> float:
        response = client.post(path, json=body)
        assert response.status_code == 200, response.text
        return time.monotonic()

    with (
        httpx.Client(base_url=backend_url, timeout=120) as client,
        httpx.Client(base_url=backend_url, timeout=120) as probe,
        ThreadPoolExecutor(BURST) as pool,
    ):
        client.get("/healthz")  # connections are warm before the clock starts
        probe.get("/healthz")
        start = time.monotonic()
        futures = [pool.submit(one, client) for _ in range(BURST)]
        for future in futures:
            future.add_done_callback(lambda _f: done.set())
        while not done.is_set():
            assert probe.get("/healthz").status_code == 200
            answered.append(time.monotonic())
        first = min(f.result() for f in futures if f.done())
        for future in futures:
            future.result()
    return start, first, answered


@pytest.mark.parametrize("make", [_slow_user, _slow_client], ids=["login", "service-token"])
def test_healthz_keeps_answering_while_a_burst_of_password_checks_runs(
    backend_url: str, sql: psycopg.Connection, make: Callable[..., dict[str, str]]
):
    start, first, answered = _burst(backend_url, make(sql, f"pw-{uuid.uuid4().hex}"))

    # Only answers from the last three quarters before the first check finished count: by then
    # every request of the burst is inside argon2, which on the loop would let nothing through.
    window = start + (first - start) / 4
    during = [t for t in answered if window < t < first]
    assert len(during) >= 5, (len(during), first - start)
