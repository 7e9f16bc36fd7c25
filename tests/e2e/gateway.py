"""The real nginx gateway for tests: nginx/default.conf.template rendered with local ports and
paths by agent_chat/gateway.py, run in the foreground under a temporary prefix."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from agent_chat.gateway import TEMPLATE, nginx_binary, placeholders, render, start, values
from tests.support.processes import free_port, stop, wait_http

__all__ = ["TEMPLATE", "nginx_binary", "placeholders", "render", "run_gateway"]


@contextmanager
def run_gateway(
    prefix: Path,
    *,
    backend: str | Sequence[str],
    agent: str | Sequence[str],
    static_root: Path,
    workers: int = 1,
) -> Iterator[str]:
    """nginx before `backend` and `agent` (host:port, or several), serving `static_root`;
    yields its URL."""
    if nginx_binary() is None:
        raise FileNotFoundError("nginx is not installed")
    port = free_port()
    filled = values(
        listen=f"127.0.0.1:{port}", backend=backend, agent=agent, static_root=static_root
    )
    proc = start(prefix, filled, workers=workers)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url + "/", timeout=20, proc=proc)
        yield url
    finally:
        stop(proc)
