"""Latency of the conversation list and history endpoints on a large account, over real HTTP.

Creates its own database (TEST_DATABASE_URL's server, or the embedded one), migrates and seeds
it, starts the backend as a subprocess, bulk-loads 10,000 conversations for one user and one
1,000-message conversation with COPY, then prints p50/p95 per endpoint. Target: p95 <= 50 ms.

    uv run python bench/backend_lists.py [--requests 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
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
from tests.support import db
from tests.support.processes import run_cli, serve

CONVERSATIONS = 10_000
MESSAGES = 1_000
TARGET_P95_MS = 50.0
PASSWORD = "bench-viewer-password"


def bench_env(database_url: str, data_dir: Path) -> dict[str, str]:
    return {
        "ENV": "development",
        "DATABASE_URL": database_url,
        "DATA_DIR": str(data_dir),
        "JWT_SECRET": "bench-jwt-secret-0123456789abcdef-0123456789",
        "AGENT_CLIENT_SECRET": "bench-agent-secret",
        "SEED_ADMIN_PASSWORD": "bench-admin-password",
        "SEED_EDITOR_PASSWORD": "bench-editor-password",
        "SEED_VIEWER_PASSWORD": PASSWORD,
        "LOG_LEVEL": "WARNING",
    }


def load(database_url: str) -> tuple[str, int]:
    """Bulk rows for the demo viewer; returns (big conversation id, its message count)."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT id FROM users WHERE username = 'viewer'").fetchone()
        assert row is not None, "seed did not create the viewer"
        owner = row[0]
        start = datetime.now(UTC) - timedelta(days=30)
        big = uuid.uuid4()
        columns = "id, owner_id, title, message_count, is_archived, created_at, updated_at"
        with conn.cursor().copy(f"COPY agent_conversations ({columns}) FROM STDIN") as copy:
            for i in range(CONVERSATIONS):
                at = start + timedelta(seconds=i * 60)
                cid = big if i == 0 else uuid.uuid4()
                count = MESSAGES if i == 0 else 0
                copy.write_row((cid, owner, f"Conversation {i}", count, i % 10 == 0, at, at))
        message_columns = "conversation_id, role, content, metadata, created_at"
        with conn.cursor().copy(f"COPY agent_messages ({message_columns}) FROM STDIN") as copy:
            for i in range(MESSAGES):
                role = "user" if i % 2 == 0 else "assistant"
                at = start + timedelta(seconds=i)
                copy.write_row((big, role, f"message {i} " + "lorem ipsum " * 20, "{}", at))
        conn.commit()
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE agent_conversations, agent_messages")
    return str(big), MESSAGES


def cpu_ms(pid: int) -> float:
    """CPU time (user + system) the process has used, in ms; 0 where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def measure(call: Callable[[], httpx.Response], n: int, pid: int) -> tuple[float, ...]:
    """p50, p95 and max wall ms per request, and the backend's CPU ms per request."""
    for _ in range(10):  # warm-up: connection, caches, prepared statements
        call().raise_for_status()
    samples = []
    cpu0 = cpu_ms(pid)
    for _ in range(n):
        t0 = time.perf_counter()
        response = call()
        samples.append((time.perf_counter() - t0) * 1000)
        response.raise_for_status()
    cpu = (cpu_ms(pid) - cpu0) / n
    samples.sort()
    p95 = samples[max(0, round(0.95 * n) - 1)]
    return statistics.median(samples), p95, samples[-1], cpu


def run(n: int) -> int:
    admin_url = db.server_url()
    url = db.create_database(admin_url)
    try:
        upgrade(url)
        with tempfile.TemporaryDirectory() as tmp:
            env = bench_env(url, Path(tmp))
            run_cli(["seed"], {**os.environ, **env})
            big, _ = load(url)
            log = Path(tmp) / "backend.log"
            with serve(["backend"], env, health_path="/readyz", log_path=log) as (base, proc):
                return report(base, big, n, proc.pid)
    finally:
        db.drop_database(admin_url, url)


def report(base: str, big: str, n: int, pid: int) -> int:
    with httpx.Client(base_url=base, timeout=30) as client:
        login = {"username": "viewer", "password": PASSWORD}
        token = client.post("/api/auth/login", json=login).json()["access_token"]
        h = {"Authorization": f"Bearer {token}"}
        conv = "/api/assistant/conversations"
        latest = client.get(f"{conv}/{big}/history", headers=h).json()["items"]
        before = latest[0]["id"] - 500  # a page from the middle of the history
        cases: dict[str, Callable[[], httpx.Response]] = {
            "list, first page (limit 50)": lambda: client.get(conv, headers=h),
            "list, offset 8,900 (limit 50)": lambda: client.get(
                conv, params={"offset": 8900}, headers=h
            ),
            "history, latest page (limit 50)": lambda: client.get(
                f"{conv}/{big}/history", headers=h
            ),
            "history, before= page (limit 50)": lambda: client.get(
                f"{conv}/{big}/history", params={"before": before}, headers=h
            ),
        }
        total = client.get(conv, headers=h).json()["total"]
        print(f"\n{total} active conversations for one user; one with {MESSAGES} messages")
        print(f"{n} requests per endpoint, sequential, one keep-alive connection\n")
        print(f"{'endpoint':36} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu ms':>8}")
        worst = 0.0
        for name, call in cases.items():
            p50, p95, top, cpu = measure(call, n, pid)
            worst = max(worst, p95)
            print(f"{name:36} {p50:8.1f} {p95:8.1f} {top:8.1f} {cpu:8.2f}")
        verdict = "meets" if worst <= TARGET_P95_MS else "MISSES"
        print(f"\nworst p95 {worst:.1f} ms: {verdict} the {TARGET_P95_MS:.0f} ms target")
        print(f"cpu ms = backend process CPU per request; load average now {_load()}")
        return 0


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"
    except OSError:
        return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=200)
    return run(parser.parse_args().requests)


if __name__ == "__main__":
    sys.exit(main())
