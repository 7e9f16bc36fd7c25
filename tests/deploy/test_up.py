"""`agent-chat up --agents 2 --backends 2` as a person runs it (CONTRACT.md, "Operations:
metrics, traces, logs"; docs/operations.md, "Health"): a login sent the moment the URL is
printed succeeds, and with the backends stopped the gateway answers 5xx (which the login page
calls unreachable, tests/e2e/test_login_health.py), never 401."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_chat import gateway
from tests.conftest import PASSWORDS
from tests.support import db
from tests.support.processes import free_port

pytestmark = pytest.mark.timeout(400)  # two backends and two agents start
OPEN = re.compile(r"open (http://\S+?)/ in a browser")


@pytest.fixture()
def up_env(backend_env: dict[str, str], tmp_path: Path) -> Iterator[dict[str, str]]:
    """The suite's environment on a database of its own, new (`up` migrates and seeds it, and
    its two agents create the checkpointer's tables side by side)."""
    admin = db.server_url()
    url = db.create_database(admin)
    try:
        yield {
            **os.environ,
            **backend_env,
            "DATABASE_URL": url,
            "DATA_DIR": str(tmp_path / "data"),
            "PYTHONUNBUFFERED": "1",
        }
    finally:
        db.drop_database(admin, url)


def _children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the direct children of `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found.append((int(entry.name), cmdline))
        except (OSError, IndexError, ValueError):
            continue
    return found


def test_a_login_sent_when_the_url_is_printed_succeeds_and_stopped_backends_are_5xx(
    up_env: dict[str, str],
) -> None:
    if gateway.nginx_binary() is None:
        pytest.skip("needs nginx")
    web, backend, agent = free_port(), free_port(), free_port()
    argv = [sys.executable, "-m", "agent_chat.cli", "up", "--agents", "2", "--backends", "2"]
    argv += ["--web-port", str(web), "--backend-port", str(backend), "--agent-port", str(agent)]
    up = subprocess.Popen(
        argv, env=up_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    printed: list[str] = []
    spawned: list[tuple[int, str]] = []
    try:
        url = None
        deadline = time.monotonic() + 300
        assert up.stdout is not None
        while url is None and time.monotonic() < deadline:
            line = up.stdout.readline()
            if not line:
                break
            printed.append(line)
            if found := OPEN.search(line):
                url = found.group(1)
        assert url is not None, "".join(printed[-40:])

        # At once, through the gateway, as the browser would.
        with httpx.Client(base_url=url, timeout=30, trust_env=False) as web_client:
            login = {"username": "admin", "password": PASSWORDS["admin"]}
            answer = web_client.post("/api/auth/login", json=login)
            assert answer.status_code == 200, answer.text
            assert answer.json()["access_token"]
            wrong = web_client.post("/api/auth/login", json={**login, "password": "wrong"})
            assert wrong.status_code == 401

            spawned = _children(up.pid)
            backends = [pid for pid, cmd in spawned if " backend " in f"{cmd} "]
            assert len(backends) == 2, spawned
            for pid in backends:
                os.kill(pid, signal.SIGKILL)
            try:
                refused = web_client.post("/api/auth/login", json=login)
            except httpx.TransportError:
                pass  # `up` saw a child die and stopped the gateway too
            else:
                assert refused.status_code >= 500, refused.text  # never a wrong password
    finally:
        up.send_signal(signal.SIGINT)
        try:
            up.wait(timeout=30)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()
        if up.stdout is not None:
            up.stdout.close()
        for pid, _cmd in spawned:  # `up` stops its children; none may outlive the test
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
