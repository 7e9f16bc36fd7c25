"""First-token latency through the whole stack (backend + agent + a fake LLM streaming 100 tokens
25 ms apart) against a bare Gradio echo with the same endpoint shape (bench/echo_app.py), on the
same machine, with the same client: raw SSE over httpx (POST .../gradio_api/queue/join, then
GET .../gradio_api/queue/data?session_hash=...), not gradio_client, which adds its own ~100 ms.

For 1, 10, 25, 50, 100 and 200 concurrent conversations it prints p50/p95 first-token latency and
error counts for both, and the capacity metric of issue 4: the largest concurrency whose
first-token p95 is <= 1.5 s (targets: overhead <= 25 ms p50 at 1; capacity >= 0.8x the echo's;
0 errors even at 200).

    uv run python bench/agent_ttft.py [--levels 1,10,25,50,100,200] [--rounds-at-1 10] [--rounds 1]

Each level above 1 is `--rounds` bursts of that many conversations at once, the targets taking
turns burst by burst (one burst is a noisy figure on a two-core machine); one stream is
`--rounds-at-1` sequential turns, also taking turns.

Postgres: TEST_DATABASE_URL's server (a scratch database is created and dropped), else embedded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.migrate import upgrade  # noqa: E402
from tests.support import db  # noqa: E402
from tests.support.processes import free_port, run_cli, serve, stop, wait_http  # noqa: E402

GRADIO = "/api/agent/gradio"
FIRST_TOKEN = re.compile(r"\bt0\b")
LAST_TOKEN = re.compile(r"\bt99\b")
ERROR_MESSAGE = re.compile(r'"type":\s*"error"')
ERROR_CODE = re.compile(r'"type":\s*"error",\s*"code":\s*"([A-Z_]+)"')
CAPACITY_P95_S = 1.5
STREAM_TIMEOUT_S = 180.0
PASSWORD = "bench-admin-pass"


@dataclass
class Target:
    """One server under test: where its Gradio lives and how a conversation starts."""

    name: str
    base: str  # .../api/agent/gradio
    headers: dict[str, str] = field(default_factory=dict)
    fn_index: int = 0
    inputs: int = 0
    backend: str | None = None  # the agent creates its conversations through the backend

    async def conversations(self, http: httpx.AsyncClient, n: int) -> list[str]:
        if self.backend is None:
            return [str(uuid.uuid4()) for _ in range(n)]
        ids = []
        for _ in range(n):
            made = await http.post(
                self.backend + "/api/assistant/conversations", json={}, headers=self.headers
            )
            made.raise_for_status()
            ids.append(str(made.json()["id"]))
        return ids

    async def discover(self, http: httpx.AsyncClient) -> None:
        """fn_index and input count of the `chat` endpoint, from Gradio's /config."""
        config = (await http.get(self.base + "/config", headers=self.headers)).json()
        for index, dep in enumerate(config["dependencies"]):
            if dep.get("api_name") == "chat":
                self.fn_index, self.inputs = dep.get("id", index), len(dep["inputs"])
                return
        raise RuntimeError(f"{self.name}: no chat endpoint in {self.base}/config")


@dataclass
class Outcome:
    first_token_s: float | None = None
    error: str | None = None


async def one_stream(http: httpx.AsyncClient, target: Target, conversation_id: str) -> Outcome:
    """Send one message; time until the first token arrives; check the stream completes."""
    session = uuid.uuid4().hex
    data: list[Any] = [{"text": "hello", "files": []}, [], conversation_id, "", "", ""]
    payload = {
        "data": data[: target.inputs],
        "fn_index": target.fn_index,
        "session_hash": session,
        "event_data": None,
    }
    outcome = Outcome()
    started = time.perf_counter()
    stage = "join"
    try:
        async with asyncio.timeout(STREAM_TIMEOUT_S):
            joined = await http.post(
                target.base + "/gradio_api/queue/join", json=payload, headers=target.headers
            )
            if joined.status_code != 200:
                return Outcome(error=f"join {joined.status_code}")
            stage = "data"
            await _read_stream(http, target, session, started, outcome)
    except (TimeoutError, httpx.HTTPError) as exc:
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {str(cause)[:40]})" if cause else ""
        outcome.error = f"{stage} {type(exc).__name__}{detail}"
    return outcome


async def _read_stream(
    http: httpx.AsyncClient, target: Target, session: str, started: float, outcome: Outcome
) -> None:
    seen_last = False
    url = target.base + "/gradio_api/queue/data"
    params = {"session_hash": session}
    async with http.stream("GET", url, params=params, headers=target.headers) as response:
        if response.status_code != 200:
            outcome.error = f"data {response.status_code}"
            return
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            if outcome.first_token_s is None and FIRST_TOKEN.search(line):
                outcome.first_token_s = time.perf_counter() - started
            seen_last = seen_last or LAST_TOKEN.search(line) is not None
            if ERROR_MESSAGE.search(line):
                code = ERROR_CODE.search(line)
                outcome.error = outcome.error or f"stream error {code[1] if code else '?'}"
            if "process_completed" not in line:
                continue  # parse only the last message: the client's CPU is the servers' too
            message = json.loads(line[5:])
            if message.get("msg") == "process_completed":
                if not message.get("success", False):
                    outcome.error = outcome.error or "process failed"
                elif not seen_last:
                    outcome.error = outcome.error or "incomplete stream"
                return
    outcome.error = outcome.error or "stream closed early"


@dataclass
class Row:
    target: str
    concurrency: int
    samples: list[float]
    failures: list[str]

    @property
    def errors(self) -> int:
        return len(self.failures)

    def pct(self, q: float) -> float | None:
        if not self.samples:
            return None
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def new_client() -> httpx.AsyncClient:
    """A client that opens a new connection per request, as the same for both servers: reusing
    keep-alive connections under overload raced with the server closing them and showed up as
    spurious ReadError / "Server disconnected" failures on queue/data at 200 streams."""
    limits = httpx.Limits(max_connections=2000, max_keepalive_connections=0)
    timeout = httpx.Timeout(STREAM_TIMEOUT_S, connect=30.0, pool=STREAM_TIMEOUT_S)
    return httpx.AsyncClient(limits=limits, timeout=timeout)


async def run_level(target: Target, n: int, rounds: int) -> Row:
    samples: list[float] = []
    failures: list[str] = []
    for _ in range(rounds):
        async with new_client() as http:
            ids = await target.conversations(http, n)
            outcomes = await asyncio.gather(*(one_stream(http, target, cid) for cid in ids))
        for outcome in outcomes:
            if outcome.error or outcome.first_token_s is None:
                failures.append(outcome.error or "no first token")
            if outcome.first_token_s is not None:
                samples.append(outcome.first_token_s)
        await asyncio.sleep(0.5)  # let runs release their leases and persist
    return Row(target.name, n, samples, failures)


def capacity(rows: list[Row], target: str) -> int:
    ok = [
        r.concurrency
        for r in rows
        if r.target == target and r.errors == 0 and (r.pct(0.95) or 1e9) <= CAPACITY_P95_S
    ]
    return max(ok, default=0)


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f}"


def report(rows: list[Row]) -> None:
    print()
    print(
        f"{'concurrency':>11} | {'echo p50':>8} {'echo p95':>8} {'err':>4} | "
        f"{'agent p50':>9} {'agent p95':>9} {'err':>4} | {'overhead p50':>12}"
    )
    print("-" * 84)
    for n in sorted({r.concurrency for r in rows}):
        echo = next(r for r in rows if r.target == "echo" and r.concurrency == n)
        agent = next(r for r in rows if r.target == "agent" and r.concurrency == n)
        e50, a50 = echo.pct(0.5), agent.pct(0.5)
        overhead = None if e50 is None or a50 is None else a50 - e50
        print(
            f"{n:>11} | {ms(e50):>8} {ms(echo.pct(0.95)):>8} {echo.errors:>4} | "
            f"{ms(a50):>9} {ms(agent.pct(0.95)):>9} {agent.errors:>4} | {ms(overhead):>12}"
        )
    echo_cap, agent_cap = capacity(rows, "echo"), capacity(rows, "agent")
    ratio = agent_cap / echo_cap if echo_cap else float("nan")
    print(
        f"\nlatencies in ms; capacity (largest concurrency with first-token p95 <= "
        f"{CAPACITY_P95_S} s and no errors): echo {echo_cap}, agent {agent_cap} "
        f"(ratio {ratio:.2f}, target >= 0.8)"
    )


@contextmanager
def process(argv: list[str], env: dict[str, str], health: str, log: Path) -> Iterator[str]:
    """A helper process on a free port (the echo app, the fake LLM)."""
    port = free_port()
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, *argv, "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_http(f"http://127.0.0.1:{port}{health}", proc=proc)
            yield f"http://127.0.0.1:{port}"
        finally:
            stop(proc)


@contextmanager
def scratch_database() -> Iterator[str]:
    admin = db.server_url()
    url = db.create_database(admin)
    try:
        upgrade(url)
        yield url
    finally:
        db.drop_database(admin, url)


def stack_env(database_url: str, data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ENV": "development",
        "DATABASE_URL": database_url,
        "DATA_DIR": str(data_dir),
        "JWT_SECRET": "bench-jwt-secret-0123456789abcdef0123456789",
        "AGENT_CLIENT_ID": "agent-chat",
        "AGENT_CLIENT_SECRET": "bench-agent-secret",
        "SEED_ADMIN_PASSWORD": PASSWORD,
        "SEED_EDITOR_PASSWORD": "bench-editor-pass",
        "SEED_VIEWER_PASSWORD": "bench-viewer-pass",
        "LOG_LEVEL": "WARNING",
    }


@contextmanager
def agent_stack(work: Path, stack: ExitStack) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(backend, agent, env) on a scratch database, the scripted LLM (100 tokens, 25 ms each)
    behind the agent; the processes live as long as `stack`."""
    script = work / "llm.json"
    script.write_text(json.dumps({"default": {"tokens": 100, "delay_ms": 25}}))
    database_url = stack.enter_context(scratch_database())
    env = stack_env(database_url, work / "data")
    run_cli(["seed"], env)
    backend, _ = stack.enter_context(
        serve(["backend"], env, health_path="/readyz", log_path=work / "backend.log")
    )
    llm = stack.enter_context(
        process(
            ["-m", "tests.fakes.llm_server", "--script", str(script)],
            env,
            "/healthz",
            work / "llm.log",
        )
    )
    agent_env = {
        **env,
        "BACKEND_URL": backend,
        "LLM_API_BASE": llm + "/v1",
        "LLM_API_KEY": "bench",
        "AGENT__MAX_MODEL_CALLS": "4",
    }
    agent, _ = stack.enter_context(
        serve(["agent"], agent_env, health_path="/healthz", log_path=work / "agent.log")
    )
    yield backend, agent, env


@contextmanager
def servers(work: Path, schedule_every: int = 0) -> Iterator[tuple[str, str, str]]:
    """(backend, agent, echo) base URLs, all on this machine; with `schedule_every`, a
    schedule asks the agent a question that often meanwhile (a second backend fires it)."""
    with ExitStack() as stack:
        backend, agent, env = stack.enter_context(agent_stack(work, stack))
        echo = stack.enter_context(
            process(["bench/echo_app.py"], env, "/healthz", work / "echo.log")
        )
        if schedule_every:
            schedule_load(stack, work, env, agent, schedule_every)
        yield backend, agent, echo


def schedule_load(
    stack: ExitStack, work: Path, env: dict[str, str], agent: str, every: int
) -> None:
    """A backend running the schedules' worker against `agent`, and a schedule firing every
    `every` seconds (each firing one turn of the scripted 100-token answer)."""
    worker_env = {
        **env,
        "SCHEDULES__ENABLED": "true",
        "SCHEDULES__AGENT_URL": agent,
        "SCHEDULES__TICK_S": "1",
        "SCHEDULES__MIN_INTERVAL_S": "1",
    }
    worker, _ = stack.enter_context(
        serve(["backend"], worker_env, health_path="/readyz", log_path=work / "worker.log")
    )
    with httpx.Client(base_url=worker, timeout=30) as http:
        token = http.post(
            "/api/auth/login", json={"username": "admin", "password": PASSWORD}
        ).json()["access_token"]
        created = http.post(
            "/api/schedules",
            json={"name": "bench load", "every_s": every, "prompt": "How many orders today?"},
            headers={"Authorization": f"Bearer {token}"},
        )
        created.raise_for_status()


async def measure(
    backend: str,
    agent: str,
    echo: str,
    *,
    levels: list[int],
    rounds_at_1: int,
    names: list[str],
    rounds: int = 1,
) -> None:
    async with new_client() as http:
        login = await http.post(
            backend + "/api/auth/login", json={"username": "admin", "password": PASSWORD}
        )
        token = login.json()["access_token"]
        targets = [
            Target("echo", echo + GRADIO),
            Target("agent", agent + GRADIO, {"Authorization": f"Bearer {token}"}, backend=backend),
        ]
        targets = [t for t in targets if t.name in names]
        for target in targets:
            await target.discover(http)
            await run_level(target, 2, 1)  # warm-up, not reported
        rows = []
        for n in levels:
            # Bursts of one level take turns between the targets, so that a drift in the
            # machine's speed during the level weighs on both alike.
            merged = {t.name: Row(t.name, n, [], []) for t in targets}
            for _ in range(rounds_at_1 if n == 1 else rounds):
                for target in targets:
                    burst = await run_level(target, n, 1)
                    merged[target.name].samples.extend(burst.samples)
                    merged[target.name].failures.extend(burst.failures)
            for target in targets:
                row = merged[target.name]
                rows.append(row)
                print(
                    f"{target.name:>5} x{n:<3} p50 {ms(row.pct(0.5))} ms, "
                    f"p95 {ms(row.pct(0.95))} ms, "
                    f"errors {row.errors} {dict(Counter(row.failures)) or ''}",
                    flush=True,
                )
        if len(targets) == 2:
            report(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,10,25,50,100,200")
    parser.add_argument("--rounds-at-1", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=1, help="bursts of each level above 1")
    parser.add_argument("--targets", default="echo,agent", help="which servers to measure")
    parser.add_argument(
        "--schedule-every", type=int, default=0, help="a schedule firing every N s meanwhile"
    )
    args = parser.parse_args()
    levels = [int(n) for n in args.levels.split(",")]
    with (
        tempfile.TemporaryDirectory(prefix="agent-ttft-") as tmp,
        servers(Path(tmp), args.schedule_every) as urls,
    ):
        names = args.targets.split(",")
        asyncio.run(
            measure(
                *urls,
                levels=levels,
                rounds_at_1=args.rounds_at_1,
                names=names,
                rounds=args.rounds,
            )
        )


if __name__ == "__main__":
    main()
