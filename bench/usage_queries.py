"""Latency of the usage reads at 1M model-call rows, over real HTTP.

Creates its own database (TEST_DATABASE_URL's server, or the embedded one), migrates and seeds
it, bulk-loads 1,000,000 `usage_calls` rows with COPY (500 users, 90 days, 3 models; the demo
viewer has 200 conversations) and builds the rollups from them with the sums the write path
keeps, starts the backend and prints p50/p95 of `GET /api/usage/me`, of one conversation and
of `GET /api/admin/usage` per grouping (its first page of 500 items in the default order; a
later page and the browser's order by total are shown too), and of a 10-call write. Target:
p95 <= 25 ms.

    uv run python bench/usage_queries.py [--requests 200] [--rows 1000000]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.migrate import upgrade
from bench.backend_lists import PASSWORD, _load, bench_env, measure
from tests.support import db
from tests.support.processes import run_cli, serve

USERS = 500
DAYS = 90
MODELS = ("gpt-4o-mini", "gpt-4o", "demo")
VIEWER_CONVERSATIONS = 200
TARGET_P95_MS = 25.0
ROLLUPS = """
INSERT INTO usage_daily (user_id, day, model, input_tokens, output_tokens, model_calls,
                         estimated_calls)
SELECT user_id, day, model, sum(input_tokens), sum(output_tokens), count(*),
       count(*) FILTER (WHERE source = 'estimated')
FROM usage_calls GROUP BY user_id, day, model;
INSERT INTO usage_conversations (conversation_id, user_id, input_tokens, output_tokens, model_calls)
SELECT conversation_id, min(user_id::text)::uuid, sum(input_tokens), sum(output_tokens), count(*)
FROM usage_calls WHERE conversation_id IS NOT NULL GROUP BY conversation_id;
"""


def load(database_url: str, rows: int) -> str:
    """Users, the viewer's conversations, `rows` calls and their rollups; one conversation id."""
    rng = random.Random(7)
    with psycopg.connect(database_url) as conn:
        viewer = conn.execute("SELECT id FROM users WHERE username = 'viewer'").fetchone()
        assert viewer is not None, "seed did not create the viewer"
        users = [viewer[0]] + [uuid.uuid4() for _ in range(USERS - 1)]
        now = datetime.now(UTC)
        with conn.cursor().copy(
            "COPY users (id, username, password_hash, roles, is_active, created_at, updated_at)"
            " FROM STDIN"
        ) as copy:
            for n, uid in enumerate(users[1:]):
                copy.write_row((uid, f"bench_{n}", "x", ["viewer"], True, now, now))
        mine = [uuid.uuid4() for _ in range(VIEWER_CONVERSATIONS)]
        columns = "id, owner_id, title, message_count, is_archived, created_at, updated_at"
        with conn.cursor().copy(f"COPY agent_conversations ({columns}) FROM STDIN") as copy:
            for n, cid in enumerate(mine):
                copy.write_row((cid, viewer[0], f"Conversation {n}", 2, False, now, now))
        others = [uuid.uuid4() for _ in range(20_000)]
        today = now.date()
        columns = (
            "idempotency_key, user_id, conversation_id, run_id, mode, model, input_tokens,"
            " output_tokens, source, evaluation, day, created_at"
        )
        with conn.cursor().copy(f"COPY usage_calls ({columns}) FROM STDIN") as copy:
            for n in range(rows):
                viewer_call = n % 50 == 0  # the viewer: 2% of all calls
                uid = users[0] if viewer_call else users[1 + n % (USERS - 1)]
                cid = rng.choice(mine) if viewer_call else others[n % len(others)]
                day = today - timedelta(days=n % DAYS)
                source = "estimated" if n % 97 == 0 else "reported"
                copy.write_row(
                    (f"bench-{n}", uid, cid, "bench", "dynamic", MODELS[n % 3],
                     rng.randint(200, 4000), rng.randint(5, 400), source, False, day, now)
                )  # fmt: skip
        conn.execute(ROLLUPS)
        conn.commit()
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE users, usage_calls, usage_daily, usage_conversations")
        daily = conn.execute("SELECT count(*) FROM usage_daily").fetchone()
        print(f"{rows:,} calls; {daily[0] if daily else 0:,} usage_daily rows")
    return str(mine[0])


def run(n: int, rows: int) -> int:
    admin_url = db.server_url()
    url = db.create_database(admin_url)
    try:
        upgrade(url)
        with tempfile.TemporaryDirectory() as tmp:
            env = bench_env(url, Path(tmp))
            run_cli(["seed"], {**os.environ, **env})
            started = time.perf_counter()
            cid = load(url, rows)
            print(f"loaded in {time.perf_counter() - started:.0f} s")
            log = Path(tmp) / "backend.log"
            with serve(["backend"], env, health_path="/readyz", log_path=log) as (base, proc):
                return report(base, cid, n, proc.pid, env)
    finally:
        db.drop_database(admin_url, url)


def report(base: str, cid: str, n: int, pid: int, env: dict[str, str]) -> int:
    with httpx.Client(base_url=base, timeout=30) as client:

        def token(username: str, password: str) -> str:
            body = {"username": username, "password": password}
            return str(client.post("/api/auth/login", json=body).json()["access_token"])

        viewer = token("viewer", PASSWORD)
        admin = token("admin", env["SEED_ADMIN_PASSWORD"])
        service = client.post(
            "/api/auth/service-token",
            json={"client_id": "agent-chat", "client_secret": env["AGENT_CLIENT_SECRET"]},
        ).json()["access_token"]
        hv, ha = {"Authorization": f"Bearer {viewer}"}, {"Authorization": f"Bearer {admin}"}
        agent = {"Authorization": f"Bearer {service}", "X-On-Behalf-Of": viewer}

        def write() -> httpx.Response:
            calls = [
                {"key": uuid.uuid4().hex, "conversation_id": cid, "model": "gpt-4o-mini",
                 "input_tokens": 900, "output_tokens": 40, "source": "reported"}
                for _ in range(10)
            ]  # fmt: skip
            return client.post("/api/agent/usage", json={"calls": calls}, headers=agent)

        cases: dict[str, Callable[[], httpx.Response]] = {
            "GET /api/usage/me (30 days)": lambda: client.get("/api/usage/me", headers=hv),
            "GET one conversation (+usage)": lambda: client.get(
                f"/api/assistant/conversations/{cid}", headers=hv
            ),
            "GET /api/admin/usage by user": lambda: client.get(
                "/api/admin/usage", params={"group_by": "user"}, headers=ha
            ),
            "GET /api/admin/usage by day": lambda: client.get(
                "/api/admin/usage", params={"group_by": "day"}, headers=ha
            ),
            "GET /api/admin/usage by model": lambda: client.get(
                "/api/admin/usage", params={"group_by": "model"}, headers=ha
            ),
            "  by day, 20th page": lambda: client.get(
                "/api/admin/usage", params={"group_by": "day", "offset": 9500}, headers=ha
            ),
            "  by day, by total (the page's)": lambda: client.get(
                "/api/admin/usage",
                params={"group_by": "day", "sort": "total_tokens", "order": "desc"},
                headers=ha,
            ),
            "POST /api/agent/usage (10 calls)": write,
        }
        print(f"{n} requests per endpoint, sequential, one keep-alive connection\n")
        print(f"{'endpoint':36} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu ms':>8}")
        worst = 0.0
        for name, call in cases.items():
            p50, p95, top, cpu = measure(call, n, pid)
            if name.startswith("GET"):  # the default pages; the indented rows are not the goal's
                worst = max(worst, p95)
            print(f"{name:36} {p50:8.1f} {p95:8.1f} {top:8.1f} {cpu:8.2f}")
        verdict = "meets" if worst <= TARGET_P95_MS else "MISSES"
        print(f"\nworst read p95 {worst:.1f} ms: {verdict} the {TARGET_P95_MS:.0f} ms target")
        print(f"load average now {_load()}")
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    return run(args.requests, args.rows)


if __name__ == "__main__":
    sys.exit(main())
