"""The `agent-chat` console script."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

from pydantic import ValidationError

from agent_chat import evaluate, frontend
from backend.config import Settings
from backend.pgembed import resolve_database_url

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
    uvicorn.run(app, host=args.host, port=args.port, log_level=settings.log_level.lower())
    return 0


def cmd_agent(args: argparse.Namespace) -> int:
    from agent.app import main as serve_agent
    from agent.config import Settings as AgentSettings

    agent_settings = AgentSettings()
    agent_settings.database_url = _database_url(_settings())
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


def cmd_up(args: argparse.Namespace) -> int:
    """Everything for a person on one machine; Ctrl-C stops all of it."""
    from backend.migrate import upgrade
    from backend.seed import run as seed

    settings = _settings()
    frontend.ensure_built()
    url = _database_url(settings)
    upgrade(url)
    asyncio.run(seed(settings, url))
    env = {**os.environ, "DATABASE_URL": url}
    backend_url = f"http://{args.host}:{args.backend_port}"
    env.setdefault("BACKEND_URL", backend_url)
    children = [
        _spawn(["backend", "--host", args.host, "--port", str(args.backend_port)], env),
        _spawn(["agent", "--host", args.host, "--port", str(args.agent_port)], env),
    ]
    web = frontend.serve(
        host=args.host,
        port=args.web_port,
        backend_url=backend_url,
        agent_url=f"http://{args.host}:{args.agent_port}",
        env=env,
    )
    children.append(web)
    logins = ", ".join(f"{r} / {settings.seed_password(r) or '?'}" for r in _ROLES)
    print(f"\nagent-chat backend: {backend_url}/docs")
    print(f"agent-chat agent: http://{args.host}:{args.agent_port}/api/agent/gradio")
    print(f"demo logins: {logins}")
    print(f"\nopen http://{args.host}:{args.web_port}/ in a browser (Ctrl-C stops everything)\n")
    return _supervise(children)


def _supervise(children: list[subprocess.Popen[bytes]]) -> int:
    stop = False

    def _on_signal(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    while not stop and all(c.poll() is None for c in children):
        time.sleep(0.5)
    for child in children:
        if child.poll() is None:
            child.terminate()
    for child in children:
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
    return 0 if stop else 1


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
    p.set_defaults(func=cmd_up)
    evaluate.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(
        level=os.environ.get("LOG_LEVEL", "INFO"), format="%(levelname)s %(name)s %(message)s"
    )
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except ValidationError as exc:  # before ValueError, its base: one line, no input values
        print(f"agent-chat: {refusal(exc)}", file=sys.stderr)
        return 2
    except (ValueError, frontend.FrontendError) as exc:  # refused config, or no Node.js
        print(f"agent-chat: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
