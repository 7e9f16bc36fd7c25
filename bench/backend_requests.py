"""The backend's own CPU per request, for the routes every agent turn calls.

One backend process on a scratch database, driven one request at a time by a plain httpx
client (no agent, no load): for each route, `--requests` calls after a warm-up, and the
backend process's CPU time (user + system, from /proc) and the wall time, per call. The floor
is `GET /healthz`, which touches no database.

    uv run python bench/backend_requests.py [--requests 400]

Postgres: TEST_DATABASE_URL's server (a scratch database is created and dropped), else embedded.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.agent_ttft import PASSWORD, scratch_database, stack_env  # noqa: E402
from tests.support.processes import run_cli, serve  # noqa: E402

WARM_UP = 20


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(backend: str, pid: int, requests: int) -> None:
    async with httpx.AsyncClient(base_url=backend) as http:
        login = await http.post("/api/auth/login", json={"username": "admin", "password": PASSWORD})
        user_token = login.json()["access_token"]
        service = await http.post(
            "/api/auth/service-token",
            json={"client_id": "agent-chat", "client_secret": "bench-agent-secret"},
        )
        as_user = {"Authorization": f"Bearer {user_token}"}
        as_agent = {
            "Authorization": f"Bearer {service.json()['access_token']}",
            "X-On-Behalf-Of": f"Bearer {user_token}",
        }
        made = await http.post("/api/assistant/conversations", json={}, headers=as_user)
        agent_path = f"/api/agent/conversations/{made.json()['id']}"
        user_path = f"/api/assistant/conversations/{made.json()['id']}"

        async def ok(response: Awaitable[httpx.Response]) -> None:
            answer = await response
            if not answer.is_success:
                raise SystemExit(f"{answer.request.url}: {answer.status_code} {answer.text}")

        holder = uuid.uuid4().hex

        async def renew() -> None:
            body = {"holder": holder, "ttl_s": 30}
            await ok(http.put(agent_path + "/lease", json=body, headers=as_agent))

        async def read_lease() -> None:  # a relayed attach's lookup of the run's owner
            await ok(http.get(agent_path + "/lease", headers=as_agent))

        async def take_and_end() -> None:
            body = {"holder": uuid.uuid4().hex, "ttl_s": 30, "run_id": uuid.uuid4().hex}
            await ok(http.put(agent_path + "/lease", json=body, headers=as_agent))
            end = {"holder": body["holder"]}
            await ok(http.post(agent_path + "/end", json=end, headers=as_agent))

        async def active() -> None:
            await ok(http.get(agent_path + "/active", headers=as_user))

        async def question() -> None:
            row = {"role": "user", "content": "hello", "metadata": {}}
            await ok(http.post(user_path + "/messages", json=row, headers=as_agent))

        routes: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            ("GET /healthz (floor)", lambda: ok(http.get("/healthz"))),
            ("GET .../active (user)", active),
            ("PUT .../lease, a renewal", renew),
            ("GET .../lease (relayed attach)", read_lease),
            ("PUT .../lease + POST .../end", take_and_end),
            ("POST .../messages (question)", question),
        ]
        print(f"{'route':32} {'backend CPU':>12} {'wall':>9}   per call, {requests} calls")
        for name, call in routes:
            for _ in range(WARM_UP):
                await call()
            cpu, wall = cpu_seconds(pid), time.perf_counter()
            for _ in range(requests):
                await call()
            cpu, wall = cpu_seconds(pid) - cpu, time.perf_counter() - wall
            print(f"{name:32} {1000 * cpu / requests:9.2f} ms {1000 * wall / requests:6.2f} ms")
            if name.startswith("GET .../lease"):
                await ok(http.post(agent_path + "/end", json={"holder": holder}, headers=as_agent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="backend-requests-") as tmp, ExitStack() as stack:
        database_url = stack.enter_context(scratch_database())
        env = stack_env(database_url, Path(tmp) / "data")
        run_cli(["seed"], env)
        backend, proc = stack.enter_context(
            serve(["backend"], env, health_path="/readyz", log_path=Path(tmp) / "backend.log")
        )
        asyncio.run(measure(backend, proc.pid, args.requests))


if __name__ == "__main__":
    main()
