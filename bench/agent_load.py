"""Load through the nginx gateway: N concurrent conversations, each several turns with tool
calls, against one agent process, against two, and against the bare Gradio echo floor
(bench/echo_app.py) behind the same nginx template, all in one run on this machine.

The model is the scripted fake (tests/fakes/llm_server.py) at a real model's pace: the first
token after FIRST_DELAY_MS, then TOKEN_DELAY_MS per token (40 tokens/s). A conversation's turns:
"find the revenue dashboards" (a search_dashboards call, then an answer), "tell me more" (an
answer), "check dashboard 42" (a get_dashboard call, then an answer). Every conversation has its
own login, the gateway's affinity key, so conversations spread over the agents.

For each level it prints first-output p50/p95 (join -> the first streamed value: a tool card or
the first token), turn p50/p95 (join -> process_completed), errors, and each process's CPU
(% of one core over the level) and peak RSS; then the capacities (the largest level with
first-output p95 <= 1.5 s and no errors) and the issue's targets: 0 errors at 200; two agents
>= 1.6x one; one agent >= 0.8x the echo floor.

    uv run python bench/agent_load.py [--levels 25,50,100,150,200] [--turns 3] [--backends 1]

The clients, nginx, the fake model, the backend and the agents share this machine's cores: the
figures are a floor for each process, and other work on the machine moves them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import agent_ttft  # noqa: E402

from agent_chat import gateway  # noqa: E402
from tests.support.processes import free_port, run_cli, serve, stop, wait_http  # noqa: E402

GRADIO = "/api/agent/gradio"
PY_SPY = str(Path(sys.executable).parent / "py-spy")
FIRST_DELAY_MS = 400
TOKEN_DELAY_MS = 25
ANSWER_TOKENS = 60
CAPACITY_P95_S = 1.5
TURNS = [
    "find the revenue dashboards",
    "tell me more about them",
    "check dashboard 42",
]
ANSWER = {"tokens": ANSWER_TOKENS, "delay_ms": TOKEN_DELAY_MS, "first_delay_ms": FIRST_DELAY_MS}
SCRIPT = {
    "rules": [
        {
            "match": "find the revenue",
            "response": {
                "tool_calls": [{"name": "search_dashboards", "args": {"query": "revenue"}}],
                "first_delay_ms": FIRST_DELAY_MS,
            },
        },
        {
            "match": "check dashboard 42",
            "response": {
                "tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}],
                "first_delay_ms": FIRST_DELAY_MS,
            },
        },
        {"match": "", "on": "tool", "response": ANSWER},
    ],
    "default": ANSWER,
}


@dataclass
class Target:
    name: str
    gateway: str
    pids: dict[str, int]  # process label -> pid, measured during its levels
    agent: bool = True
    fn_index: int = 0
    inputs: int = 0


@dataclass
class Row:
    target: str
    level: int
    first: list[float] = field(default_factory=list)
    turn: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    usage: dict[str, tuple[float, float]] = field(default_factory=dict)  # cpu %, peak MiB
    cpu_s: dict[str, float] = field(default_factory=dict)  # CPU seconds per process

    def cpu_ms_per_turn(self, prefix: str) -> float | None:
        """CPU time of the processes named `prefix*` per completed turn: what a turn costs,
        whatever else the machine runs."""
        spent = sum(v for k, v in self.cpu_s.items() if k.startswith(prefix))
        return 1000 * spent / len(self.turn) if self.turn else None

    def pct(self, values: list[float], q: float) -> float | None:
        if not values:
            return None
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


class Sampler:
    """CPU time and peak RSS of some processes while a level runs (psutil, every 0.5 s)."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.procs = {label: psutil.Process(pid) for label, pid in pids.items()}
        self.peak = dict.fromkeys(self.procs, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _cpu(self) -> dict[str, float]:
        return {label: sum(p.cpu_times()[:2]) for label, p in self.procs.items()}

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            for label, proc in self.procs.items():
                self.peak[label] = max(self.peak[label], proc.memory_info().rss)

    def __enter__(self) -> Sampler:
        self.started, self.cpu0 = time.monotonic(), self._cpu()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.elapsed, self.cpu1 = time.monotonic() - self.started, self._cpu()

    def seconds(self) -> dict[str, float]:
        return {label: self.cpu1[label] - self.cpu0[label] for label in self.procs}

    def usage(self) -> dict[str, tuple[float, float]]:
        return {
            label: (
                100 * (self.cpu1[label] - self.cpu0[label]) / self.elapsed,
                max(self.peak[label], self.procs[label].memory_info().rss) / 2**20,
            )
            for label in self.procs
        }


async def turn(
    http: httpx.AsyncClient, target: Target, token: str, cid: str, text: str, session: str
) -> tuple[float | None, float | None, str | None]:
    """One message through the gateway: (first output s, turn s, error)."""
    headers = {"Authorization": f"Bearer {token}"}
    data: list[Any] = [{"text": text, "files": []}, [], cid, "", "", ""][: target.inputs]
    body = {"data": data, "fn_index": target.fn_index, "session_hash": session}
    base = target.gateway + GRADIO + "/gradio_api"
    started = time.perf_counter()
    first: float | None = None
    try:
        async with asyncio.timeout(agent_ttft.STREAM_TIMEOUT_S):
            joined = await http.post(base + "/queue/join", json=body, headers=headers)
            if joined.status_code != 200:
                return None, None, f"join {joined.status_code}"
            params = {"session_hash": session}
            async with http.stream(
                "GET", base + "/queue/data", params=params, headers=headers
            ) as r:
                if r.status_code != 200:
                    return None, None, f"data {r.status_code}"
                async for line in r.aiter_lines():
                    if first is None and '"process_generating"' in line:
                        first = time.perf_counter() - started
                    if '"type": "error"' in line or '"type":"error"' in line:
                        return first, None, "stream error " + _code(line)
                    if '"process_completed"' in line:
                        message = json.loads(line[5:])
                        if not message.get("success"):
                            return first, None, "process failed"
                        if f"t{ANSWER_TOKENS - 1}" not in line:
                            return first, None, "incomplete answer"
                        return first, time.perf_counter() - started, None
    except (TimeoutError, httpx.HTTPError) as exc:
        return first, None, type(exc).__name__
    return first, None, "stream closed early"


def _code(line: str) -> str:
    """The code of the stream's error message (Gradio's JSON may or may not have spaces)."""
    compact = line.replace('": "', '":"')
    at = compact.find('"code":"', compact.find('"type":"error"'))
    return compact[at + 8 :].split('"', 1)[0] if at >= 0 else "?"


async def conversation(
    http: httpx.AsyncClient, target: Target, token: str, turns: int, row: Row
) -> None:
    cid = str(uuid.uuid4())
    if target.agent:
        made = await http.post(
            target.gateway + "/api/assistant/conversations",
            json={},
            headers={"Authorization": f"Bearer {token}"},
        )
        if made.status_code != 201:
            row.failures.append(f"create {made.status_code}")
            return
        cid = str(made.json()["id"])
    session = uuid.uuid4().hex  # one Gradio session a conversation, as the browser's client
    for n in range(turns):
        text = TURNS[n % len(TURNS)]
        first, took, error = await turn(http, target, token, cid, text, session)
        if first is not None:
            row.first.append(first)
        if took is not None:
            row.turn.append(took)
        if error:
            row.failures.append(error)
            return


async def run_level(
    target: Target, tokens: list[str], level: int, turns: int, profile: Path | None = None
) -> Row:
    row = Row(target.name, level)
    with Sampler(target.pids) as sampler, _profiled(target, level, profile):
        async with agent_ttft.new_client() as http:
            await asyncio.gather(
                *(conversation(http, target, tokens[i], turns, row) for i in range(level))
            )
    row.usage, row.cpu_s = sampler.usage(), sampler.seconds()
    await asyncio.sleep(1.0)  # leases released, history written
    return row


@contextmanager
def _profiled(target: Target, level: int, folder: Path | None) -> Iterator[None]:
    """py-spy samples of each agent process of `target` while the level runs (collapsed
    stacks, one file per process: `folder/<target>-x<level>-<process>.txt`)."""
    if folder is None or not target.agent:
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    spies = []
    for label, pid in target.pids.items():
        if label.startswith("agent"):
            out = folder / f"{target.name}-x{level}-{label}.txt"
            rate = os.environ.get("BENCH_PROFILE_HZ", "50")  # py-spy's samples a second
            command = [PY_SPY, "record", "--format", "raw", "-r", rate, "-p", str(pid)]
            spies.append(
                subprocess.Popen(
                    [*command, "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
                )
            )
    try:
        yield
    finally:
        for spy in spies:
            spy.send_signal(signal.SIGINT)
        for spy in spies:
            spy.wait(timeout=60)


def capacity(rows: list[Row], target: str) -> int:
    ok = [
        r.level
        for r in rows
        if r.target == target and not r.failures and (r.pct(r.first, 0.95) or 1e9) <= CAPACITY_P95_S
    ]
    return max(ok, default=0)


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f}"


def print_row(row: Row) -> None:
    usage = "  ".join(f"{k} {cpu:.0f}% {rss:.0f}MiB" for k, (cpu, rss) in row.usage.items())
    errors = f"{len(row.failures)} {dict(Counter(row.failures)) or ''}"
    main = "echo" if row.target == "echo" else "agent"
    cost = row.cpu_ms_per_turn(main)
    per_turn = "-" if cost is None else f"{cost:.0f}"
    print(
        f"{row.target:>7} x{row.level:<4} first p50 {ms(row.pct(row.first, 0.5)):>5} "
        f"p95 {ms(row.pct(row.first, 0.95)):>5} | turn p50 {ms(row.pct(row.turn, 0.5)):>5} "
        f"p95 {ms(row.pct(row.turn, 0.95)):>5} | {main} CPU/turn {per_turn:>4} ms | "
        f"errors {errors} | {usage}",
        flush=True,
    )


def report(rows: list[Row], levels: list[int]) -> None:
    caps = {name: capacity(rows, name) for name in ("echo", "agent1", "agent2")}
    print(
        f"\ncapacity (largest level with first-output p95 <= {CAPACITY_P95_S} s, no errors): "
        f"echo {caps['echo']}, one agent {caps['agent1']}, two agents {caps['agent2']}"
    )
    top = max(levels)
    errors_at_top = {r.target: len(r.failures) for r in rows if r.level == top}
    two = caps["agent2"] / caps["agent1"] if caps["agent1"] else float("nan")
    one = caps["agent1"] / caps["echo"] if caps["echo"] else float("nan")
    print(f"errors at {top}: {errors_at_top} (target 0)")
    print(f"two agents / one: {two:.2f} (target >= 1.6)")
    print(f"one agent / echo floor: {one:.2f} (target >= 0.8)")
    # What a turn costs in CPU does not depend on what else the machine runs (latency does): a
    # process saturates when its streams need its core, so this ratio bounds the capacities'.
    cost = {
        name: [
            c
            for r in rows
            if r.target == name and (c := r.cpu_ms_per_turn("echo" if name == "echo" else "agent"))
        ]
        for name in caps
    }
    if all(cost.values()):
        echo, agent = min(cost["echo"]), min(cost["agent1"])
        print(
            f"CPU per turn (least over the levels): echo {echo:.0f} ms, agent {agent:.0f} ms, "
            f"two agents together {min(cost['agent2']):.0f} ms: an agent turn costs "
            f"{agent / echo:.1f}x an echo turn"
        )
    if caps["agent2"] == top:
        print(f"(two agents held the highest level measured, {top}: the ratio is a lower bound)")


@contextmanager
def stack(work: Path, backends: int) -> Iterator[dict[str, Any]]:
    """Postgres (scratch), the fake model, backends, two agents, the echo, three gateways."""
    script = work / "llm.json"
    script.write_text(json.dumps(SCRIPT))
    static = work / "static"
    static.mkdir()
    (static / "index.html").write_text("<div id=app></div>")
    work.chmod(0o755)
    with ExitStack() as stack:
        env = agent_ttft.stack_env(stack.enter_context(agent_ttft.scratch_database()), work)
        run_cli(["seed"], env)
        llm = stack.enter_context(
            agent_ttft.process(
                ["-m", "tests.fakes.llm_server", "--script", str(script)],
                env,
                "/healthz",
                work / "llm.log",
            )
        )
        procs: dict[str, int] = {}
        backend_urls = []
        for n in range(backends):
            url, proc = stack.enter_context(
                serve(["backend"], env, health_path="/readyz", log_path=work / f"backend{n}.log")
            )
            backend_urls.append(url)
            procs[f"backend{n + 1}"] = proc.pid
        agent_env = {
            **env,
            "BACKEND_URL": backend_urls[0],
            "LLM_API_BASE": llm + "/v1",
            "LLM_API_KEY": "bench",
        }
        agents = []
        for n in (1, 2):
            url, proc = stack.enter_context(
                serve(["agent"], agent_env, health_path="/healthz", log_path=work / f"agent{n}.log")
            )
            agents.append(urlsplit(url).netloc)
            procs[f"agent{n}"] = proc.pid
        port = free_port()
        echo_proc = stack.enter_context(_echo(port, env, work / "echo.log"))
        procs["echo"] = echo_proc
        backend_hosts = [urlsplit(u).netloc for u in backend_urls]
        gateways = {}
        for name, upstream in (
            ("echo", [f"127.0.0.1:{port}"]),
            ("agent1", agents[:1]),
            ("agent2", agents),
        ):
            gateways[name], procs[f"nginx-{name}"] = stack.enter_context(
                _gateway(work / f"nginx-{name}", backend_hosts, upstream, static)
            )
        yield {"gateways": gateways, "pids": procs, "backend": backend_urls[0]}


@contextmanager
def _echo(port: int, env: dict[str, str], log: Path) -> Iterator[int]:
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "bench/echo_app.py",
                "--port",
                str(port),
                "--tokens",
                str(ANSWER_TOKENS),
                "--delay-ms",
                str(TOKEN_DELAY_MS),
                "--first-delay-ms",
                str(FIRST_DELAY_MS),
            ],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc)
        yield proc.pid
    finally:
        stop(proc)


@contextmanager
def _gateway(
    prefix: Path, backends: list[str], agents: list[str], static: Path
) -> Iterator[tuple[str, int]]:
    port = free_port()
    filled = gateway.values(
        listen=f"127.0.0.1:{port}", backend=backends, agent=agents, static_root=static
    )
    proc = gateway.start(prefix, filled, connections=8192)
    try:
        wait_http(f"http://127.0.0.1:{port}/", proc=proc)
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        stop(proc)


async def logins(backend: str, count: int) -> list[str]:
    """`count` logins of the admin: distinct JWTs, so the gateway spreads conversations."""
    body = {"username": "admin", "password": agent_ttft.PASSWORD}
    async with httpx.AsyncClient(timeout=60) as http:
        sem = asyncio.Semaphore(8)

        async def one() -> str:
            async with sem:
                response = await http.post(backend + "/api/auth/login", json=body)
                response.raise_for_status()
                return str(response.json()["access_token"])

        return list(await asyncio.gather(*(one() for _ in range(count))))


async def discover(target: Target, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(timeout=30) as http:
        config = (await http.get(target.gateway + GRADIO + "/config", headers=headers)).json()
    for index, dep in enumerate(config["dependencies"]):
        if dep.get("api_name") == "chat":
            target.fn_index, target.inputs = dep.get("id", index), len(dep["inputs"])
            return
    raise RuntimeError(f"{target.name}: no chat endpoint")


async def measure(
    env: dict[str, Any], levels: list[int], turns: int, names: list[str], profile: Path | None
) -> None:
    pids, gateways = env["pids"], env["gateways"]
    tokens = await logins(env["backend"], max(levels))
    backend = {k: v for k, v in pids.items() if k.startswith("backend")}
    backend["client"] = os.getpid()  # this script: the conversations' side of the load
    targets = {
        "echo": Target(
            "echo", gateways["echo"], {"echo": pids["echo"], "client": os.getpid()}, agent=False
        ),
        "agent1": Target("agent1", gateways["agent1"], {"agent1": pids["agent1"], **backend}),
        "agent2": Target(
            "agent2",
            gateways["agent2"],
            {"agent1": pids["agent1"], "agent2": pids["agent2"], **backend},
        ),
    }
    chosen = [targets[n] for n in names]
    for target in chosen:
        await discover(target, tokens[0])
        await run_level(target, tokens, 4, 1)  # warm-up, not reported
    rows = []
    for level in levels:
        for target in chosen:
            row = await run_level(target, tokens, level, turns, profile)
            rows.append(row)
            print_row(row)
    if len(chosen) == 3:
        report(rows, levels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="25,50,100,150,200")
    parser.add_argument("--turns", type=int, default=3, help="messages per conversation")
    parser.add_argument("--backends", type=int, default=1)
    parser.add_argument("--targets", default="echo,agent1,agent2")
    parser.add_argument("--profile", type=Path, help="py-spy each agent into this folder")
    args = parser.parse_args()
    levels = [int(n) for n in args.levels.split(",")]
    print(
        f"model pace: first token {FIRST_DELAY_MS} ms, then {1000 // TOKEN_DELAY_MS} tokens/s, "
        f"{ANSWER_TOKENS} tokens an answer; {args.turns} turns a conversation; "
        f"{psutil.cpu_count()} CPUs, load {psutil.getloadavg()[0]:.1f} at start",
        flush=True,
    )
    with (
        tempfile.TemporaryDirectory(prefix="agent-load-") as tmp,
        stack(Path(tmp), args.backends) as env,
    ):
        asyncio.run(measure(env, levels, args.turns, args.targets.split(","), args.profile))


if __name__ == "__main__":
    main()
