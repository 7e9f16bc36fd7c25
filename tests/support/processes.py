"""Start the project's real processes on free ports for tests and benchmarks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
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


def stop(proc: subprocess.Popen[bytes], *, timeout: float = 10) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
