"""The `agent-chat` console script."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from agent_chat import evaluate, frontend, gateway, supervisor
from backend.config import Settings
from backend.pgembed import resolve_database_url
from common import heap, observability

log = logging.getLogger("agent-chat")


def _settings() -> Settings:
    return Settings()


def _database_url(settings: Settings) -> str:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return resolve_database_url(settings.database_url, settings.data_dir)


def cmd_migrate(args: argparse.Namespace) -> int:
    from backend.migrate import upgrade

    settings = _settings()
    upgrade(_database_url(settings))
    print("database is at the latest migration")
    return 0


def cmd_seed(args: argparse.Namespace) -> int:
    from backend.seed import run

    settings = _settings()
    asyncio.run(run(settings, _database_url(settings)))
    print("demo data is in place")
    return 0


def cmd_backend(args: argparse.Namespace) -> int:
    import uvicorn

    from backend.main import create_app

    settings = _settings()
    settings.database_url = _database_url(settings)
    app = create_app(settings)
    heap.serving()
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level=settings.log_level.lower(),
        log_config=observability.uvicorn_log_config(),
    )
    return 0


def cmd_agent(args: argparse.Namespace) -> int:
    from agent.app import main as serve_agent
    from agent.config import Settings as AgentSettings

    agent_settings = AgentSettings()
    agent_settings.database_url = _database_url(_settings())
    if not agent_settings.agent.advertise_url:
        wildcard = args.host in ("0.0.0.0", "::", "")  # noqa: S104 (reading, not binding)
        host = socket.gethostname() if wildcard else args.host
        agent_settings.agent.advertise_url = f"http://{host}:{args.port}"
    serve_agent(args.host, args.port, agent_settings)
    return 0


def cmd_retention(args: argparse.Namespace) -> int:
    """One checkpoint-retention sweep now (the backend runs one every retention.interval_s)."""
    import json

    from backend.db import create_engine
    from backend.retention.sweep import sweep

    settings = _settings()
    url = _database_url(settings)

    async def once() -> dict[str, object]:
        engine = create_engine(url, pool_size=1)
        try:
            return (await sweep(engine, settings.retention)).as_dict()
        finally:
            await engine.dispose()

    print(json.dumps(asyncio.run(once())))
    return 0


_ROLES = ("admin", "editor", "viewer")


def _spawn(argv: Sequence[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "agent_chat.cli", *argv], env=env)


def _child(name: str, argv: Sequence[str], env: dict[str, str]) -> supervisor.Child:
    return supervisor.Child(name, lambda: _spawn(argv, env))


def cmd_up(args: argparse.Namespace) -> int:
    """Everything for a person on one machine, each process restarted if it dies; Ctrl-C
    stops all of it."""
    from backend.migrate import upgrade
    from backend.seed import run as seed

    if args.agents < 1 or args.backends < 1:
        raise ValueError("--agents and --backends need at least 1")
    settings = _settings()
    dist = frontend.ensure_built()
    url = _database_url(settings)
    upgrade(url)
    asyncio.run(seed(settings, url))
    env = {**os.environ, "DATABASE_URL": url}
    taken = {args.web_port}
    backend_ports = _free_ports(args.host, args.backend_port, args.backends, taken)
    agent_ports = _free_ports(args.host, args.agent_port, args.agents, taken)
    web_url = f"http://{args.host}:{args.web_port}"
    # Several backends: the agents reach them through the gateway too (balanced, failover).
    backend_url = web_url if args.backends > 1 else f"http://{args.host}:{backend_ports[0]}"
    env.setdefault("BACKEND_URL", backend_url)
    # One upload folder for every agent: a file uploaded to an agent that dies is still there
    # for the agent the gateway sends the message to next.
    env.setdefault("GRADIO_TEMP_DIR", str((settings.data_dir / "uploads").resolve()))
    children = [
        *(
            _child(f"backend {p}", ["backend", "--host", args.host, "--port", str(p)], env)
            for p in backend_ports
        ),
        *(
            _child(f"agent {p}", ["agent", "--host", args.host, "--port", str(p)], env)
            for p in agent_ports
        ),
        supervisor.Child(
            "gateway", lambda: _web(args, settings, dist, backend_ports, agent_ports, env)
        ),
    ]
    started: list[subprocess.Popen[bytes]] = []
    try:
        for child in children:
            started.append(child.spawn(time.monotonic()))
    except gateway.GatewayError:
        supervisor.stop(started)
        raise
    ready = [
        *(f"http://{args.host}:{p}/readyz" for p in backend_ports),
        *(f"http://{args.host}:{p}/readyz" for p in agent_ports),
        f"{web_url}/",
    ]
    try:
        _wait_ready(ready, started, timeout=args.ready_timeout)
    except BaseException:  # not ready, or Ctrl-C while waiting: nothing is left running
        supervisor.stop(started)
        raise
    logins = ", ".join(f"{r} / {settings.seed_password(r) or '?'}" for r in _ROLES)
    for port in backend_ports:
        print(f"\nagent-chat backend: http://{args.host}:{port}/docs", end="")
    for port in agent_ports:
        print(f"\nagent-chat agent: http://{args.host}:{port}/api/agent/gradio", end="")
    print(f"\ndemo logins: {logins}")
    print(f"\nopen {web_url}/ in a browser (Ctrl-C stops everything)\n", flush=True)
    # A child that dies from now on is started again (backoff, logged); the others go on.
    return supervisor.Supervisor(children).run()


class NotReady(Exception):
    """A process of `up` did not become ready."""


def _wait_ready(
    urls: Sequence[str], children: Sequence[subprocess.Popen[bytes]], *, timeout: float
) -> None:
    """Every process answers its readiness check (backends: the database; agents: the
    checkpointer and model; the gateway: the page), so a login sent the moment the URL is
    printed is served; a child that exits first ends the wait."""
    import httpx

    deadline = time.monotonic() + timeout
    waiting = list(urls)
    with httpx.Client(timeout=2, trust_env=False) as probe:
        while waiting:
            for child in children:
                if child.poll() is not None:
                    raise NotReady(f"a process exited with {child.returncode} at start-up")
            try:
                if probe.get(waiting[0]).is_success:
                    waiting.pop(0)
                    continue
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise NotReady(f"{waiting[0]} was not ready within {timeout:.0f}s")
            time.sleep(0.25)


def _free_ports(host: str, start: int, count: int, taken: set[int]) -> list[int]:
    """`count` ports from `start` up, skipping ports in use (or already given out)."""
    ports: list[int] = []
    port = start
    while len(ports) < count:
        if port > 65535:
            raise ValueError(f"no {count} free ports from {start}")
        if port not in taken and _is_free(host, port):
            ports.append(port)
            taken.add(port)
        port += 1
    return ports


def _is_free(host: str, port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _web(
    args: argparse.Namespace,
    settings: Settings,
    dist: Path,
    backend_ports: list[int],
    agent_ports: list[int],
    env: dict[str, str],
) -> subprocess.Popen[bytes]:
    """The local gateway: `vite preview` before one backend and one agent, else nginx (the
    production template: a login stays on one agent, dead replicas are skipped)."""
    if len(backend_ports) == 1 and len(agent_ports) == 1:
        return frontend.serve(
            host=args.host,
            port=args.web_port,
            backend_url=f"http://{args.host}:{backend_ports[0]}",
            agent_url=f"http://{args.host}:{agent_ports[0]}",
            env=env,
        )
    filled = gateway.values(
        listen=f"{args.host}:{args.web_port}",
        backend=[f"{args.host}:{p}" for p in backend_ports],
        agent=[f"{args.host}:{p}" for p in agent_ports],
        static_root=dist,
    )
    return gateway.start((settings.data_dir / "gateway").resolve(), filled)


def refusal(exc: ValidationError) -> str:
    """A refused configuration on one line: each problem by its variable, never a value."""
    fields: list[str] = []
    rules: list[str] = []
    for error in exc.errors(include_url=False, include_context=False, include_input=False):
        message = error["msg"].removeprefix("Value error, ")
        name = "__".join(str(part) for part in error["loc"]).upper()
        (fields if name else rules).append(f"{name}: {message}" if name else message)
    problems = "; ".join(rules + fields)
    return f"invalid configuration: {problems}" if fields else problems


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-chat", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("backend", help="run the FastAPI core")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.set_defaults(func=cmd_backend)
    p = sub.add_parser("agent", help="run the Gradio agent service")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=7860)
    p.set_defaults(func=cmd_agent)
    sub.add_parser("migrate", help="upgrade the database (idempotent)").set_defaults(
        func=cmd_migrate
    )
    sub.add_parser("seed", help="load demo data (idempotent)").set_defaults(func=cmd_seed)
    sub.add_parser(
        "retention", help="prune and expire agent checkpoints once (conf.yml retention:)"
    ).set_defaults(func=cmd_retention)
    p = sub.add_parser("up", help="run everything for a person")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--backend-port", type=int, default=8000)
    p.add_argument("--agent-port", type=int, default=7860)
    p.add_argument("--web-port", type=int, default=5173, help="the browser client")
    p.add_argument(
        "--agents",
        type=int,
        default=1,
        help="agent processes, on free ports from --agent-port up (more than one: nginx is "
        "the gateway)",
    )
    p.add_argument(
        "--backends", type=int, default=1, help="backend processes, from --backend-port up"
    )
    p.add_argument(
        "--ready-timeout",
        type=float,
        default=300,
        help="seconds to wait for every process to answer its readiness check",
    )
    p.set_defaults(func=cmd_up)
    evaluate.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    observability.configure_logging(os.environ.get("LOG_LEVEL", "INFO"))
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except ValidationError as exc:  # before ValueError, its base: one line, no input values
        print(f"agent-chat: {refusal(exc)}", file=sys.stderr)
        return 2
    except (ValueError, frontend.FrontendError, gateway.GatewayError, NotReady) as exc:
        # a refused config, no Node.js, no nginx
        print(f"agent-chat: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
