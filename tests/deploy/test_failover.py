"""Failover through the gateway (CONTRACT.md, "Failover through the gateway"), black-box:
`agent-chat up --agents 2 --backends 2` under load from four clients (lists, creations sent
again with their `Idempotency-Key`, logins, the agent's config and uploads) while a backend
and an agent are SIGKILLed, then, once both are back, the other backend and the other agent
(one replica of each kind alive all along). Every answer is counted: none is a 5xx or a
connection error, every conversation created exists once, and a creation sent again with its
key is answered with the same conversation.

The long form (a kill every few seconds for ten minutes, with chats): bench/chaos.py, whose
eighth invariant counts the same failures (bench/chaos_gateway.py).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import httpx
import psycopg
import pytest

from agent_chat import gateway
from tests.conftest import PASSWORDS
from tests.deploy.test_up import OPEN, _children, up_env  # noqa: F401 (a fixture)
from tests.support.processes import free_port

pytestmark = pytest.mark.timeout(900)  # four restarts on a loaded machine
GRADIO = "/api/agent/gradio"
CLIENTS = 4
SETTLE_S = 3.0  # load before the first kills and after the last ones
PAUSE_S = 0.05  # between one client's requests: load, not a CPU hog


@dataclass
class Tally:
    """Every answer by what it was, the failures with their request, the conversations."""

    answers: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    created: dict[str, str] = field(default_factory=dict)  # title -> id
    keys: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (title, id)
    replays: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, what: str, answer: httpx.Response | Exception) -> httpx.Response | None:
        with self.lock:
            if isinstance(answer, Exception):
                self.answers["connection error"] += 1
                self.failures.append(f"{what}: {type(answer).__name__} {answer}")
                return None
            self.answers[str(answer.status_code)] += 1
            if answer.status_code >= 500:
                self.failures.append(f"{what}: {answer.status_code} {answer.text[:200]}")
            return answer


def _send(tally: Tally, what: str, call: Callable[[], httpx.Response]) -> httpx.Response | None:
    try:
        return tally.count(what, call())
    except httpx.TransportError as exc:
        return tally.count(what, exc)


def _create(client: httpx.Client, tally: Tally, token: str) -> None:
    """A creation with its key; every other one is sent again with the same key."""
    key, title = uuid.uuid4().hex, f"failover {uuid.uuid4().hex[:12]}"
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": key}
    answer = _send(
        tally,
        "create",
        lambda: client.post("/api/assistant/conversations", json={"title": title}, headers=headers),
    )
    if answer is None or answer.status_code != 201:
        return
    cid = answer.json()["id"]
    with tally.lock:
        tally.created[title] = cid
        tally.keys[key] = (title, cid)
    if len(tally.keys) % 2:
        again = _send(
            tally,
            "create again",
            lambda: client.post(
                "/api/assistant/conversations", json={"title": title}, headers=headers
            ),
        )
        if again is not None and again.status_code == 201:
            assert again.json()["id"] == cid, (title, again.text)
            with tally.lock:
                tally.replays += 1


def _load(url: str, token: str, tally: Tally, stop: threading.Event, offset: int) -> None:
    """One client: lists, creations, logins, the agent's config and an upload, in turn."""
    auth = {"Authorization": f"Bearer {token}"}
    login = {"username": "admin", "password": PASSWORDS["admin"]}
    upload = {"files": ("rows.csv", b"a,b\n1,2\n", "text/csv")}
    steps: list[tuple[str, Callable[[httpx.Client], httpx.Response | None]]] = [
        ("list", lambda c: c.get("/api/assistant/conversations", headers=auth)),
        ("create", lambda c: _create(c, tally, token)),
        ("login", lambda c: c.post("/api/auth/login", json=login)),
        ("agent config", lambda c: c.get(f"{GRADIO}/config", headers=auth)),
        (
            "agent upload",
            lambda c: c.post(f"{GRADIO}/gradio_api/upload", headers=auth, files=upload),
        ),
    ]
    turns = itertools.islice(itertools.cycle(steps), offset, None)
    with httpx.Client(base_url=url, timeout=30, trust_env=False) as client:
        for what, step in turns:
            if stop.is_set():
                return
            if what == "create":
                step(client)
            else:
                _send(tally, what, lambda step=step: step(client))  # type: ignore[misc]
            time.sleep(PAUSE_S)


def _ready(port: int, timeout: float = 300) -> float:
    """Seconds until the process on `port` answers /readyz (it was just killed)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).is_success:
                return time.monotonic() - started
        time.sleep(0.2)
    raise AssertionError(f"the process on {port} was not ready again within {timeout:.0f}s")


def _port(command: str) -> int:
    return int(command.split("--port")[1].split()[0])


def _kill(up: int, kind: str, turn: int) -> tuple[str, int]:
    """SIGKILL the first (turn 0) or the second (turn 1) replica of `kind` by port."""
    replicas = {pid: cmd for pid, cmd in _children(up) if f" {kind} " in f"{cmd} "}
    assert len(replicas) == 2, replicas
    pid, command = sorted(replicas.items(), key=lambda r: _port(r[1]))[turn]
    os.kill(pid, signal.SIGKILL)
    return f"{kind} {_port(command)}", _port(command)


@contextlib.contextmanager
def _up(env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[str], list[str]]]:
    web, backend, agent = free_port(), free_port(), free_port()
    argv = [sys.executable, "-m", "agent_chat.cli", "up", "--agents", "2", "--backends", "2"]
    argv += ["--web-port", str(web), "--backend-port", str(backend), "--agent-port", str(agent)]
    up = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    printed: list[str] = []
    spawned: list[tuple[int, str]] = []
    drain: threading.Thread | None = None
    try:
        assert up.stdout is not None
        url = None
        while url is None:
            line = up.stdout.readline()
            if not line:
                break
            printed.append(line)
            if found := OPEN.search(line):
                url = found.group(1)
        assert url is not None, "".join(printed[-40:])
        out = up.stdout
        drain = threading.Thread(target=lambda: printed.extend(iter(out.readline, "")))
        drain.start()
        spawned = _children(up.pid)
        yield url, up, printed
    finally:
        spawned += _children(up.pid)
        up.send_signal(signal.SIGINT)
        try:
            up.wait(timeout=30)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()
        for pid, _cmd in spawned:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if drain is not None:
            drain.join(timeout=10)
        if up.stdout is not None:
            up.stdout.close()


def test_replicas_killed_under_load_cost_no_request_and_no_duplicate(
    up_env: dict[str, str],  # noqa: F811
) -> None:
    if gateway.nginx_binary() is None:
        pytest.skip("needs nginx")
    tally, stop = Tally(), threading.Event()
    with _up(up_env) as (url, up, printed):
        token = httpx.post(
            f"{url}/api/auth/login",
            json={"username": "admin", "password": PASSWORDS["admin"]},
            timeout=30,
        ).json()["access_token"]
        clients = [
            threading.Thread(target=_load, args=(url, token, tally, stop, i))
            for i in range(CLIENTS)
        ]
        for client in clients:
            client.start()
        kills: list[str] = []
        try:
            time.sleep(SETTLE_S)
            # a backend and an agent at once, then the other of each once both are back: one
            # replica of each kind is alive all along, and the restarts overlap (a Python start
            # takes long on a loaded two-core machine)
            for turn in (0, 1):
                killed = [_kill(up.pid, kind, turn) for kind in ("backend", "agent")]
                if turn == 0:
                    for what, port in killed:
                        try:
                            kills.append(f"{what} back in {_ready(port):.1f}s")
                        except AssertionError as exc:
                            log = "".join(printed[-60:])
                            raise AssertionError(
                                f"{exc}; answers {tally.answers}:\n{log}"
                            ) from None
            time.sleep(SETTLE_S)
        finally:
            stop.set()
            for client in clients:
                client.join(timeout=60)
        # a creation sent again after all of it is still the same conversation
        key, (title, cid) = next(iter(tally.keys.items()))
        again = httpx.post(
            f"{url}/api/assistant/conversations",
            json={"title": title},
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key},
            timeout=30,
        )
        assert again.status_code == 201 and again.json()["id"] == cid, again.text
    print(f"answers: {dict(tally.answers)}; kills: {kills}; replays: {tally.replays}")
    assert tally.failures == [], (tally.failures[:20], dict(tally.answers), kills)
    assert len(tally.created) > 10 and tally.replays > 5, dict(tally.answers)
    with psycopg.connect(up_env["DATABASE_URL"]) as sql:
        rows = sql.execute(
            "SELECT title, count(*) FROM agent_conversations WHERE title LIKE 'failover %%' "
            "GROUP BY title"
        ).fetchall()
    stored: dict[str, int] = dict(rows)
    assert {t: n for t, n in stored.items() if n != 1} == {}  # none twice
    assert set(tally.created) <= set(stored)  # every one answered is there
