"""Start the project's real processes on free ports for tests and benchmarks."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


LISTEN_PORTS = (20000, 32000)  # where free_port looks first: below Linux's ephemeral range


def free_port() -> int:
    """A port nothing listens on now, for a process to bind a moment later.

    Chosen below the range the OS hands out to outgoing connections (32768-60999 on Linux):
    a port the OS picked would be free now but could be taken, before the process binds it,
    by any of the suite's many client connections (Postgres, httpx). Random, so parallel test
    workers rarely pick the same one; the OS's own pick when none of a few tries is free.
    """
    for _ in range(20):
        port = random.randint(*LISTEN_PORTS)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(
    url: str, *, timeout: float = 60.0, proc: subprocess.Popen[bytes] | None = None
) -> None:
    """Poll `url` until it answers 2xx; fail early when `proc` exits."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered")
        try:
            if httpx.get(url, timeout=2).is_success:
                return
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {timeout}s ({last!r})")


def run_cli(argv: Sequence[str], env: Mapping[str, str], *, timeout: float = 300) -> None:
    subprocess.run(
        [sys.executable, "-m", "agent_chat.cli", *argv],
        env=dict(env),
        cwd=ROOT,
        check=True,
        timeout=timeout,
    )


@contextmanager
def serve(
    argv: Sequence[str], env: Mapping[str, str], *, health_path: str, log_path: Path
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run `agent-chat <argv> --port P`, wait for health, yield (base_url, process)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_chat.cli", *argv, "--port", str(port)],
            env={**os.environ, **env},
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            # A loaded machine starts slowly (make test: every xdist worker starts a stack at once).
            wait_http(base + health_path, proc=proc, timeout=300)
            yield base, proc
        finally:
            stop(proc)


@contextmanager
def scripted_agent(
    env: Mapping[str, str], *, backend: str, llm: str, log_path: Path, **settings: str
) -> Iterator[str]:
    """An agent process on `backend` with the scripted model at `llm` (its real `ChatOpenAI`
    path), plus `settings` as environment variables; yields its base URL."""
    agent_env = {
        **env,
        "BACKEND_URL": backend,
        "LLM_API_BASE": llm,
        "LLM_API_KEY": "fake-llm-key",
        **settings,
    }
    with serve(["agent"], agent_env, health_path="/healthz", log_path=log_path) as (base, _proc):
        yield base


def stop(proc: subprocess.Popen[bytes], *, timeout: float = 10) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
