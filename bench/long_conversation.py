"""One long conversation through the whole stack, turn by turn: does a turn cost more as the
conversation grows?

Backend, agent and the scripted OpenAI-compatible LLM (tests/fakes/llm_server.py, in this
process) on a scratch database, as bench/agent_ttft.py starts them. One conversation of
`--turns` turns, each a question the model answers with a tool call (`search_dashboards`,
through the backend) and then an answer quoting its result; each turn is sent over Gradio's raw
SSE API (queue/join + queue/data) and read to its end, after `--warm-up` turns of another
conversation (the processes' first-call costs are not the conversation's). Per turn: the whole
turn (wall), the agent's and the backend's CPU (their processes' user + system time, from
/proc), the bytes of the model requests (JSON bodies, both calls), and the thread's checkpoint
bytes written by the turn and stored after it: `checkpoint_blobs` + `checkpoint_writes`
(pg_column_size, as stored: TOAST-compressed where Postgres compresses), and the `checkpoints`
rows apart. At the end: the thread's messages (as the agent reads them) serialized once, which
the stored bytes are set against, and first / middle / last averages (`--window` turns each)
with last/first ratios.

    uv run python bench/long_conversation.py [--turns 60] [--window 5] [--root PATH]

`--root` runs another checkout's code (e.g. /work/main, before a change) with this bench: its
backend, agent and test support are imported and started from there.

CPU figures come from a machine shared with other work: compare ratios, and rerun to see noise.
Postgres: TEST_DATABASE_URL's server (a scratch database is created and dropped), else embedded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any


def _root() -> Path:
    """The checkout whose code runs: `--root`, else this bench's own (read before imports)."""
    if "--root" in sys.argv:
        return Path(sys.argv[sys.argv.index("--root") + 1]).resolve()
    return Path(__file__).resolve().parents[1]


ROOT = _root()
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import psycopg  # noqa: E402
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver  # noqa: E402
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer  # noqa: E402

from agent.config import Settings as AgentSettings  # noqa: E402
from agent.graph import build_agent, build_model  # noqa: E402
from backend.migrate import upgrade  # noqa: E402
from tests.fakes.llm_server import FakeLLM  # noqa: E402
from tests.support import db  # noqa: E402
from tests.support.processes import run_cli, serve  # noqa: E402

GRADIO = "/api/agent/gradio"
PASSWORD = "bench-admin-pass"
ANSWER = (
    "I found the dashboards matching sales: the first is healthy and serves production, the "
    "others validate with warnings on staging. Ask me to open any of them for details."
)
THREAD_BYTES = """
SELECT
    (SELECT coalesce(sum(pg_column_size(blob)), 0) FROM checkpoint_blobs WHERE thread_id = %(t)s)
    + (SELECT coalesce(sum(pg_column_size(blob)), 0) FROM checkpoint_writes
        WHERE thread_id = %(t)s) AS stored,
    (SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0)
        FROM checkpoints WHERE thread_id = %(t)s) AS rows
"""
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


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
        "RETENTION__ENABLED": "false",  # the thread's bytes before any sweep
    }


async def send(
    http: httpx.AsyncClient, base: str, token: str, fn: tuple[int, int], cid: str, text: str
) -> None:
    """One message, its stream read to the end; raises if the turn failed."""
    session = uuid.uuid4().hex
    data: list[Any] = [{"text": text, "files": []}, [], cid, "", "", ""]
    headers = {"Authorization": f"Bearer {token}"}
    payload = {"data": data[: fn[1]], "fn_index": fn[0], "session_hash": session}
    joined = await http.post(base + "/gradio_api/queue/join", json=payload, headers=headers)
    joined.raise_for_status()
    url = base + "/gradio_api/queue/data"
    async with http.stream("GET", url, params={"session_hash": session}, headers=headers) as r:
        async for line in r.aiter_lines():
            if line.startswith("data:") and "process_completed" in line:
                message = json.loads(line[5:])
                if not message.get("success") or '"type": "error"' in line:
                    raise RuntimeError(f"turn failed: {line[:300]}")
                return
    raise RuntimeError("stream closed early")


async def endpoint(http: httpx.AsyncClient, base: str, token: str) -> tuple[int, int]:
    config = (await http.get(base + "/config", headers={"Authorization": f"Bearer {token}"})).json()
    for index, dep in enumerate(config["dependencies"]):
        if dep.get("api_name") == "chat":
            return dep.get("id", index), len(dep["inputs"])
    raise RuntimeError("no chat endpoint")


async def thread_message_bytes(database_url: str, cid: str) -> tuple[int, int]:
    """(count, bytes) of the thread's messages as the agent reads them, serialized once."""
    settings = AgentSettings()
    async with AsyncPostgresSaver.from_conn_string(database_url) as saver:
        graph = build_agent(settings, model=build_model(settings), tools=[], checkpointer=saver)
        snapshot = await graph.aget_state({"configurable": {"thread_id": cid}})
    messages = list(snapshot.values.get("messages", []))
    return len(messages), len(JsonPlusSerializer().dumps_typed(messages)[1])


async def converse(
    args: argparse.Namespace,
    backend: str,
    agent: str,
    pids: tuple[int, int],
    llm: FakeLLM,
    database_url: str,
) -> tuple[list[dict[str, float]], str]:
    rows: list[dict[str, float]] = []
    timeout = httpx.Timeout(120.0, connect=30.0)
    async with httpx.AsyncClient(timeout=timeout) as http:
        login = await http.post(
            backend + "/api/auth/login", json={"username": "admin", "password": PASSWORD}
        )
        token = login.json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        fn = await endpoint(http, agent + GRADIO, token)
        warm = await http.post(backend + "/api/assistant/conversations", json={}, headers=auth)
        for turn in range(args.warm_up):  # another conversation: first-call costs, not reported
            await send(http, agent + GRADIO, token, fn, warm.json()["id"], f"{turn}: look up sales")
        made = await http.post(backend + "/api/assistant/conversations", json={}, headers=auth)
        cid = str(made.json()["id"])
        with psycopg.connect(database_url, autocommit=True) as sql:
            before = {"stored": 0, "rows": 0}
            for turn in range(1, args.turns + 1):
                requests = len(llm.requests)
                cpu = (cpu_s(pids[0]), cpu_s(pids[1]))
                started = time.perf_counter()
                await send(http, agent + GRADIO, token, fn, cid, f"Turn {turn}: look up sales")
                wall = time.perf_counter() - started
                agent_cpu, backend_cpu = cpu_s(pids[0]) - cpu[0], cpu_s(pids[1]) - cpu[1]
                sent = llm.requests[requests:]
                after = sql.execute(THREAD_BYTES, {"t": cid}).fetchone()
                stored, ckpt_rows = int(after[0]), int(after[1])
                rows.append(
                    {
                        "turn": turn,
                        "wall_ms": wall * 1000,
                        "agent_ms": agent_cpu * 1000,
                        "backend_ms": backend_cpu * 1000,
                        "model_kb": sum(len(json.dumps(r)) for r in sent) / 1024,
                        "calls": len(sent),
                        "written_kb": (stored - before["stored"]) / 1024,
                        "stored_kb": stored / 1024,
                        "rows_written_kb": (ckpt_rows - before["rows"]) / 1024,
                        "rows_kb": ckpt_rows / 1024,
                    }
                )
                before = {"stored": stored, "rows": ckpt_rows}
                if turn % args.print_every == 0:
                    r = rows[-1]
                    print(
                        f"turn {turn:>4}: {r['wall_ms']:6.0f} ms, agent {r['agent_ms']:5.0f} ms, "
                        f"backend {r['backend_ms']:4.0f} ms, model {r['model_kb']:5.1f} KB, "
                        f"written {r['written_kb']:7.1f} KB, stored {r['stored_kb']:8.1f} KB",
                        flush=True,
                    )
    return rows, cid


COLUMNS = (
    ("wall_ms", "whole turn ms"),
    ("agent_ms", "agent CPU ms"),
    ("backend_ms", "backend CPU ms"),
    ("model_kb", "model request KB"),
    ("written_kb", "ckpt written KB"),
    ("stored_kb", "ckpt stored KB"),
    ("rows_written_kb", "ckpt rows written KB"),
)


def report(rows: list[dict[str, float]], window: int, messages: tuple[int, int]) -> None:
    n = len(rows)
    mid = max(0, n // 2 - window // 2)
    parts = {
        f"turns 1-{window}": rows[:window],
        f"turns {mid + 1}-{mid + window}": rows[mid : mid + window],
        f"turns {n - window + 1}-{n}": rows[-window:],
    }
    print()
    print(f"{'':<14} | " + " | ".join(f"{label:>16}" for _, label in COLUMNS))
    means: dict[str, dict[str, float]] = {}
    for label, part in parts.items():
        means[label] = {k: statistics.mean(r[k] for r in part) for k, _ in COLUMNS}
        print(f"{label:<14} | " + " | ".join(f"{means[label][k]:>16.1f}" for k, _ in COLUMNS))
    first, last = means[next(iter(parts))], means[list(parts)[-1]]
    ratios = [last[k] / first[k] if first[k] else float("nan") for k, _ in COLUMNS]
    print(f"{'last / first':<14} | " + " | ".join(f"{x:>16.2f}" for x in ratios))
    count, size = messages
    stored = rows[-1]["stored_kb"] * 1024
    print(
        f"\nthe thread after {n} turns: {count} messages, {size / 1024:.1f} KB serialized once; "
        f"checkpoint blobs + writes {stored / 1024:.1f} KB = {stored / size:.2f}x its messages; "
        f"checkpoint rows {rows[-1]['rows_kb']:.1f} KB"
    )
    first, last = rows[0], rows[-1]
    with_rows = (last["written_kb"] + last["rows_written_kb"]) / (
        first["written_kb"] + first["rows_written_kb"]
    )
    print(
        f"written per turn, turn {n} / turn 1: {last['written_kb'] / first['written_kb']:.2f}x"
        f" (blobs + writes; with the checkpoint rows: {with_rows:.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--window", type=int, default=5, help="turns averaged per row")
    parser.add_argument("--print-every", type=int, default=10)
    parser.add_argument("--warm-up", type=int, default=3, help="turns of another conversation")
    parser.add_argument("--root", default=str(ROOT), help="the checkout whose code runs")
    args = parser.parse_args()
    print(f"{args.turns} tool turns in one conversation; code from {ROOT}")
    llm = FakeLLM().start()
    llm.add_rule(
        "look up sales",
        {"tool_calls": [{"name": "search_dashboards", "args": {"query": "sales"}}]},
    )
    llm.script.load({"default": {"text": ANSWER}})
    admin = db.server_url()
    database_url = db.create_database(admin)
    try:
        upgrade(database_url)
        with tempfile.TemporaryDirectory(prefix="long-conv-") as tmp, ExitStack() as stack:
            work = Path(tmp)
            env = stack_env(database_url, work / "data")
            run_cli(["seed"], env)
            backend, backend_proc = stack.enter_context(
                serve(["backend"], env, health_path="/readyz", log_path=work / "backend.log")
            )
            agent_env = {
                **env,
                "BACKEND_URL": backend,
                "LLM_API_BASE": llm.url,
                "LLM_API_KEY": "bench",
            }
            agent, agent_proc = stack.enter_context(
                serve(["agent"], agent_env, health_path="/healthz", log_path=work / "agent.log")
            )
            pids = (agent_proc.pid, backend_proc.pid)
            rows, cid = asyncio.run(converse(args, backend, agent, pids, llm, database_url))
        report(rows, args.window, asyncio.run(thread_message_bytes(database_url, cid)))
    finally:
        llm.stop()
        db.drop_database(admin, database_url)


if __name__ == "__main__":
    main()
