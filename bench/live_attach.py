"""Live runs (CONTRACT.md, "Runs outlive the page"): what `attach` costs.

One backend, two agent processes (A and B) and the scripted model streaming 100 tokens 50 ms
apart, all on this machine, driven with raw SSE over httpx as bench/agent_ttft.py does.

1. attach to first value: N runs live on A (default 20); then every one of them is attached at
   once, from A itself (the run's own Turn) and from B (relayed from A through the lease's
   owner_url). Printed: p50/p95 from the attach's join to its first streamed value (goal:
   p95 <= 300 ms at 20), and that every attach ended with all 100 tokens.
2. a second viewer's cost: N runs on A alone, then N runs on A each watched by a viewer on B
   from its first token on. Printed: first-token and turn p50/p95 of the runs, and A's CPU
   seconds per turn (psutil), without and with the viewers.

    uv run python bench/live_attach.py [--runs 20] [--profile DIR]

`--profile DIR` samples the attaching replica with py-spy from the burst's start until every
attach has its first value (collapsed stacks: `DIR/attach-local.txt`, `DIR/attach-relayed.txt`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import agent_ttft  # noqa: E402

from tests.support.processes import run_cli, serve  # noqa: E402

GRADIO = "/api/agent/gradio"
TOKEN = re.compile(r"\bt\d+\b")
LAST = re.compile(r"\bt99\b")


PY_SPY = str(Path(sys.executable).parent / "py-spy")


def spy(pid: int, out: Path) -> subprocess.Popen[bytes]:
    rate = os.environ.get("BENCH_PROFILE_HZ", "100")
    command = [PY_SPY, "record", "--format", "raw", "-r", rate, "-p", str(pid), "-o", str(out)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


def pct(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))] * 1000:.0f}"


async def stream(
    http: httpx.AsyncClient,
    base: str,
    headers: dict[str, str],
    fn_index: int,
    cid: str,
    action: str = "",
    first: asyncio.Event | None = None,
) -> dict[str, Any]:
    """One job on `base`: seconds to its first token-bearing value and to its end."""
    session = uuid.uuid4().hex
    data = [{"text": "" if action else "count", "files": []}, [], cid, action, "", ""]
    body = {"data": data, "fn_index": fn_index, "session_hash": session, "event_data": None}
    started = time.perf_counter()
    out: dict[str, Any] = {"first": None, "end": None, "complete": False}
    joined = await http.post(base + GRADIO + "/gradio_api/queue/join", json=body, headers=headers)
    joined.raise_for_status()
    url = base + GRADIO + "/gradio_api/queue/data"
    async with http.stream("GET", url, params={"session_hash": session}, headers=headers) as r:
        async for line in r.aiter_lines():
            if not line.startswith("data:"):
                continue
            if out["first"] is None and TOKEN.search(line):
                out["first"] = time.perf_counter() - started
                if first is not None:
                    first.set()
            out["complete"] = out["complete"] or bool(LAST.search(line))
            if "process_completed" in line:
                break
    out["end"] = time.perf_counter() - started
    return out


async def main_async(runs: int, profile: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        work = Path(tmp)
        script = work / "llm.json"
        script.write_text(json.dumps({"default": {"tokens": 100, "delay_ms": 50}}))
        database_url = stack.enter_context(agent_ttft.scratch_database())
        env = agent_ttft.stack_env(database_url, work / "data")
        run_cli(["seed"], env)
        backend, _ = stack.enter_context(
            serve(["backend"], env, health_path="/readyz", log_path=work / "backend.log")
        )
        llm = stack.enter_context(
            agent_ttft.process(
                ["-m", "tests.fakes.llm_server", "--script", str(script)],
                env,
                "/healthz",
                work / "llm.log",
            )
        )
        agent_env = {**env, "BACKEND_URL": backend, "LLM_API_BASE": llm + "/v1"}
        agent_env["LLM_API_KEY"] = "bench"
        a, a_proc = stack.enter_context(
            serve(["agent"], agent_env, health_path="/healthz", log_path=work / "a.log")
        )
        b, b_proc = stack.enter_context(
            serve(["agent"], agent_env, health_path="/healthz", log_path=work / "b.log")
        )
        async with agent_ttft.new_client() as http:
            login = await http.post(
                backend + "/api/auth/login",
                json={"username": "admin", "password": agent_ttft.PASSWORD},
            )
            headers = {"Authorization": f"Bearer {login.json()['access_token']}"}
            config = (await http.get(a + GRADIO + "/config", headers=headers)).json()
            index = next(
                i for i, d in enumerate(config["dependencies"]) if d.get("api_name") == "chat"
            )

            async def conversations(n: int) -> list[str]:
                made = [
                    await http.post(
                        backend + "/api/assistant/conversations", json={}, headers=headers
                    )
                    for _ in range(n)
                ]
                return [str(m.json()["id"]) for m in made]

            # Replicas that have served before: a burst of attaches to idle conversations
            # (NO_ACTIVE_RUN) on each, as many as the timed burst, so that the timed attaches
            # do not pay what a just-started stack pays once: each process's first Gradio job
            # and token check, and the connections a burst opens (the replica's to the backend,
            # the backend's to Postgres: a new Postgres connection is a new server process).
            idle = await conversations(runs)
            for where in (a, b):
                await asyncio.gather(
                    *(stream(http, where, headers, index, cid, "attach") for cid in idle)
                )

            # 1. attach to first value, local and relayed
            pids = {a: a_proc.pid, b: b_proc.pid}
            for name, where in (("local (A)", a), ("relayed (B)", b)):
                ids = await conversations(runs)
                firsts = [asyncio.Event() for _ in ids]
                owners = [
                    asyncio.create_task(stream(http, a, headers, index, cid, first=f))
                    for cid, f in zip(ids, firsts, strict=True)
                ]
                await asyncio.gather(*(f.wait() for f in firsts))
                await asyncio.sleep(0.5)
                seen = [asyncio.Event() for _ in ids]
                sampler = None
                if profile is not None:
                    profile.mkdir(parents=True, exist_ok=True)
                    label = "local" if where == a else "relayed"
                    sampler = spy(pids[where], profile / f"attach-{label}.txt")
                    await asyncio.sleep(1.0)  # py-spy attached
                viewing = asyncio.gather(
                    *(
                        stream(http, where, headers, index, cid, "attach", first=s)
                        for cid, s in zip(ids, seen, strict=True)
                    )
                )
                if sampler is not None:
                    await asyncio.gather(*(s.wait() for s in seen))
                    sampler.send_signal(signal.SIGINT)
                    await asyncio.to_thread(sampler.wait, 60)
                attached = await viewing
                await asyncio.gather(*owners)
                values = [o["first"] for o in attached if o["first"] is not None]
                whole = sum(o["complete"] for o in attached)
                print(
                    f"attach {name}: {runs} live runs, first value p50 {pct(values, 0.5)} ms, "
                    f"p95 {pct(values, 0.95)} ms; {whole}/{runs} saw every token"
                )

            # 2. a second viewer's cost to the owner
            proc = psutil.Process(a_proc.pid)
            for viewers in (False, True):
                ids = await conversations(runs)
                cpu = proc.cpu_times()
                before = cpu.user + cpu.system
                firsts = [asyncio.Event() for _ in ids]
                owners = [
                    asyncio.create_task(stream(http, a, headers, index, cid, first=f))
                    for cid, f in zip(ids, firsts, strict=True)
                ]
                watchers = []
                if viewers:

                    async def watch(cid: str, first: asyncio.Event) -> dict[str, Any]:
                        await first.wait()
                        return await stream(http, b, headers, index, cid, "attach")

                    watchers = [
                        asyncio.create_task(watch(cid, f))
                        for cid, f in zip(ids, firsts, strict=True)
                    ]
                results = await asyncio.gather(*owners)
                await asyncio.gather(*watchers)
                await asyncio.sleep(1.0)  # the runs store their turns and release
                cpu = proc.cpu_times()
                used = cpu.user + cpu.system - before
                first = [o["first"] for o in results if o["first"] is not None]
                ends = [o["end"] for o in results if o["end"] is not None]
                label = "with a viewer on B each" if viewers else "unwatched by others"
                print(
                    f"{runs} runs on A {label}: first token p50 {pct(first, 0.5)} / p95 "
                    f"{pct(first, 0.95)} ms, turn p50 {pct(ends, 0.5)} / p95 {pct(ends, 0.95)} "
                    f"ms, A's CPU {used / runs * 1000:.0f} ms per turn"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--profile", type=Path, help="py-spy the attaching replica into DIR")
    args = parser.parse_args()
    asyncio.run(main_async(args.runs, args.profile))


if __name__ == "__main__":
    main()
