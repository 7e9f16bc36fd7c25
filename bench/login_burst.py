"""A burst of logins against running chat streams: does password hashing stall the backend?

Starts the backend, the agent and the scripted LLM (100 tokens, 25 ms apart), then runs two
scenarios, each `--rounds` times: 20 chat streams alone (`quiet`), and the same 20 streams with 20
logins fired at the moment they start (`burst`; half with a wrong password, which costs the same
argon2 check). While the streams run, /healthz of the backend is polled back to back.
It prints p50/p95/max of the streams' first-token latency, of /healthz and of the logins.

    uv run python bench/login_burst.py [--streams 20] [--logins 20] [--rounds 3]

Postgres: TEST_DATABASE_URL's server (a scratch database is created and dropped), else embedded.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.agent_ttft import (  # noqa: E402
    GRADIO,
    PASSWORD,
    Target,
    agent_stack,
    new_client,
    one_stream,
)


@dataclass
class Sample:
    first_token_s: list[float] = field(default_factory=list)
    healthz_s: list[float] = field(default_factory=list)
    login_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f}"


async def poll_healthz(http: httpx.AsyncClient, backend: str, stop: asyncio.Event) -> list[float]:
    timings: list[float] = []
    while not stop.is_set():
        started = time.perf_counter()
        response = await http.get(backend + "/healthz")
        response.raise_for_status()
        timings.append(time.perf_counter() - started)
    return timings


async def one_login(http: httpx.AsyncClient, backend: str, wrong: bool) -> tuple[float, str]:
    body = {"username": "admin", "password": PASSWORD + ("-wrong" if wrong else "")}
    started = time.perf_counter()
    response = await http.post(backend + "/api/auth/login", json=body)
    expected = 401 if wrong else 200
    error = "" if response.status_code == expected else f"login {response.status_code}"
    return time.perf_counter() - started, error


async def scenario(target: Target, backend: str, streams: int, logins: int) -> Sample:
    sample = Sample()
    async with new_client() as http, httpx.AsyncClient(timeout=60) as probe:
        ids = await target.conversations(http, streams)
        stop = asyncio.Event()
        poller = asyncio.create_task(poll_healthz(probe, backend, stop))
        chats = [one_stream(http, target, cid) for cid in ids]
        burst = [one_login(http, backend, wrong=i % 2 == 1) for i in range(logins)]
        results = await asyncio.gather(asyncio.gather(*chats), asyncio.gather(*burst))
        stop.set()
        sample.healthz_s = await poller
    outcomes, answered = results
    for outcome in outcomes:
        if outcome.first_token_s is not None:
            sample.first_token_s.append(outcome.first_token_s)
        if outcome.error or outcome.first_token_s is None:
            sample.errors.append(outcome.error or "no first token")
    for seconds, error in answered:
        sample.login_s.append(seconds)
        if error:
            sample.errors.append(error)
    return sample


def report(rows: dict[str, Sample]) -> None:
    print()
    columns = ("first token", "healthz", "login")
    head = " | ".join(f"{what + ' p50/p95/max':>22}" for what in columns)
    print(f"{'scenario':>8} | {head} | {'errors':>6}")
    print("-" * (8 + 3 * 25 + 12))
    for name, s in rows.items():
        cells = " | ".join(
            f"{ms(pct(v, 0.5)) + ' / ' + ms(pct(v, 0.95)) + ' / ' + ms(max(v, default=None)):>22}"
            for v in (s.first_token_s, s.healthz_s, s.login_s)
        )
        print(f"{name:>8} | {cells} | {len(s.errors):>6}")
    print("\nlatencies in ms; healthz: back-to-back GET /healthz of the backend while streams run")


@contextmanager
def stack(work: Path) -> Iterator[tuple[str, str]]:
    """(backend, agent) base URLs, with the scripted LLM behind the agent."""
    with ExitStack() as processes:
        backend, agent, _env = processes.enter_context(agent_stack(work, processes))
        yield backend, agent


async def measure(backend: str, agent: str, *, streams: int, logins: int, rounds: int) -> None:
    async with new_client() as http:
        login = await http.post(
            backend + "/api/auth/login", json={"username": "admin", "password": PASSWORD}
        )
        token = login.json()["access_token"]
        target = Target(
            "agent", agent + GRADIO, {"Authorization": f"Bearer {token}"}, backend=backend
        )
        await target.discover(http)
    await scenario(target, backend, 2, 2)  # warm-up, not reported
    rows = {"quiet": Sample(), "burst": Sample()}
    for round_ in range(rounds):
        for name, n_logins in (("quiet", 0), ("burst", logins)):
            got = await scenario(target, backend, streams, n_logins)
            row = rows[name]
            row.first_token_s += got.first_token_s
            row.healthz_s += got.healthz_s
            row.login_s += got.login_s
            row.errors += got.errors
            print(
                f"round {round_ + 1} {name:>5}: first token p95 {ms(pct(got.first_token_s, 0.95))}"
                f" ms, healthz max {ms(max(got.healthz_s, default=None))} ms, "
                f"errors {len(got.errors)} {got.errors[:3] or ''}",
                flush=True,
            )
            await asyncio.sleep(0.5)  # let runs release their leases
    report(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--logins", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="login-burst-") as tmp, stack(Path(tmp)) as urls:
        asyncio.run(measure(*urls, streams=args.streams, logins=args.logins, rounds=args.rounds))


if __name__ == "__main__":
    main()
