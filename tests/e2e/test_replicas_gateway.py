"""Two agent processes and two backend processes behind the real nginx gateway, driven over
Gradio's API with gradio_client, as the browser's @gradio/client drives it: conversations spread
over both agents, a conversation started on one continues on the other, and killing the agent
that serves a live stream ends that stream for the client while a retry of the same message
through the gateway is answered by the other, with the history intact.

Which process served a request is read from nginx's access log ($upstream_addr)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from agent_chat.gateway import nginx_binary
from tests.agent.raw_gradio import fn_index
from tests.agent.support import GRADIO, Chat, collect, error_code, history, text_of
from tests.conftest import PASSWORDS, bearer
from tests.e2e.gateway import run_gateway
from tests.fakes.llm_server import FakeLLM
from tests.support.processes import ROOT, free_port, stop, wait_http

pytestmark = pytest.mark.skipif(nginx_binary() is None, reason="needs nginx")

LOGINS = 16  # P(all on one of two agents) = 2**-15
AGENT_ENV = {"AGENT__LEASE_TTL_S": "2", "LLM__REQUEST_TIMEOUT_S": "10"}


@dataclass
class Stack:
    gateway: str
    access_log: Path
    agents: dict[str, subprocess.Popen[bytes]]  # host:port -> process
    backends: list[str]

    def upstreams(self, fragment: str, since: int = 0) -> list[str]:
        """$upstream_addr of the logged requests whose URI contains `fragment`."""
        lines = self.access_log.read_text().splitlines()[since:]
        return [line.split()[3] for line in lines if fragment in line.split()[1]]

    def log_length(self) -> int:
        return len(self.access_log.read_text().splitlines())


def _spawn(argv: list[str], env: dict[str, str], log: Path) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_chat.cli", *argv, "--port", str(port)],
            env={**os.environ, **env},
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return f"127.0.0.1:{port}", proc


@pytest.fixture(scope="module")
def stack(
    seeded: dict[str, str],
    backend_url: str,
    llm: FakeLLM,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Stack]:
    """A second backend and two agents (started at once), nginx in front of all four."""
    logs = tmp_path_factory.mktemp("replicas")
    with ExitStack() as stack:
        # nginx's workers run as nobody when started by root: pytest's folders are 0700.
        static = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="replicas-web-")))
        static.chmod(0o755)
        (static / "index.html").write_text('<div id="app"></div>')
        backend2, proc = _spawn(["backend"], seeded, logs / "backend-2.log")
        stack.callback(stop, proc)
        wait_http(f"http://{backend2}/readyz", proc=proc, timeout=180)
        backends = [urlsplit(backend_url).netloc, backend2]
        env = {
            **seeded,
            **AGENT_ENV,
            "BACKEND_URL": backend_url,
            "LLM_API_BASE": llm.url,
            "LLM_API_KEY": "fake-llm-key",
        }
        agents = {}
        for n in (1, 2):
            address, proc = _spawn(["agent"], env, logs / f"agent-{n}.log")
            stack.callback(stop, proc)
            agents[address] = proc
        for address, proc in agents.items():
            wait_http(f"http://{address}/healthz", proc=proc, timeout=180)
        prefix = logs / "nginx"
        gateway = stack.enter_context(
            run_gateway(prefix, backend=backends, agent=list(agents), static_root=static)
        )
        yield Stack(gateway, prefix / "access.log", agents, backends)


@pytest.fixture(scope="module")
def http(stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.gateway, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def logins(http: httpx.Client) -> list[str]:
    """Separate logins of the admin (each a distinct JWT: the affinity key)."""
    body = {"username": "admin", "password": PASSWORDS["admin"]}
    tokens = []
    for _ in range(LOGINS):
        response = http.post("/api/auth/login", json=body)
        assert response.status_code == 200, response.text
        tokens.append(str(response.json()["access_token"]))
    assert len(set(tokens)) == LOGINS
    return tokens


@pytest.fixture(scope="module")
def placed(stack: Stack, http: httpx.Client, logins: list[str], llm: FakeLLM) -> dict[str, str]:
    """token -> the agent nginx sends it to (each login asks for Gradio's /config once, marked
    in the access log); then one conversation per login, all at once through the gateway."""
    placement = {}
    for n, token in enumerate(logins):
        probe = f"/api/agent/gradio/config?login={n}"
        assert http.get(probe, headers=bearer(token)).status_code == 200
        deadline = time.monotonic() + 5  # nginx logs a request just after answering it
        while not stack.upstreams(probe) and time.monotonic() < deadline:
            time.sleep(0.05)
        (placement[token],) = stack.upstreams(probe)
    chat = Chat(stack.gateway)
    llm.add_rule("which replica", {"text": "Any of them.", "delay_ms": 20})
    start = stack.log_length()
    jobs = []
    for token in logins:
        cid = _conversation(http, token)
        jobs.append((cid, chat.submit(token, cid, "which replica answers?")))
    for cid, job in jobs:
        assert text_of(collect(job)[-1]) == "Any of them."
        rows = history(http, logins[0], cid)
        assert [r["role"] for r in rows] == ["user", "assistant"]
    assert sorted(stack.upstreams("/queue/join", start)) == sorted(placement.values())
    return placement


def _conversation(http: httpx.Client, token: str) -> str:
    response = http.post("/api/assistant/conversations", json={}, headers=bearer(token))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_conversations_spread_over_both_agents_and_requests_over_both_backends(
    stack: Stack, placed: dict[str, str]
) -> None:
    assert set(placed.values()) == set(stack.agents)
    assert set(stack.upstreams("/queue/data")) == set(stack.agents)
    assert set(stack.upstreams("/api/assistant/conversations")) == set(stack.backends)


def test_a_conversation_started_on_one_agent_continues_on_the_other(
    stack: Stack, http: httpx.Client, placed: dict[str, str], llm: FakeLLM
) -> None:
    first, second = (next(t for t, a in placed.items() if a == agent) for agent in stack.agents)
    cid = _conversation(http, first)
    chat = Chat(stack.gateway)
    llm.enqueue({"text": "Dashboard 42 is Revenue."}, {"text": "It was Revenue, 42."})
    start = stack.log_length()

    assert text_of(chat.send(first, cid, "Remember dashboard 42")[-1]) == (
        "Dashboard 42 is Revenue."
    )
    assert text_of(chat.send(second, cid, "Which dashboard did I name?")[-1]) == (
        "It was Revenue, 42."
    )

    assert stack.upstreams("/queue/join", start) == list(stack.agents)
    sent = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] != "system"]
    assert sent == [
        "Remember dashboard 42",
        "Dashboard 42 is Revenue.",
        "Which dashboard did I name?",
    ]
    assert [r["role"] for r in history(http, first, cid)] == ["user", "assistant"] * 2


def test_killing_the_agent_of_a_live_stream_ends_it_and_the_retry_is_answered_by_the_other(
    stack: Stack, http: httpx.Client, placed: dict[str, str], llm: FakeLLM
) -> None:
    token, victim = next(iter(placed.items()))
    cid = _conversation(http, token)
    llm.enqueue({"text": "First answer."})
    assert text_of(Chat(stack.gateway).send(token, cid, "Start here")[-1]) == "First answer."
    llm.enqueue({"tokens": 400, "delay_ms": 50})  # 20 s of text: it is cut long before
    live = LiveStream(stack.gateway, token, cid, "Tell me about dashboard 42")
    live.wait_for("t3 ")  # a few tokens in (Gradio sends each as a diff)
    start = stack.log_length()

    os.kill(stack.agents[victim].pid, signal.SIGKILL)
    stack.agents[victim].wait(timeout=10)

    # The stream stops short: no `process_completed`, and the body ends without its last
    # chunk, which every HTTP client reports (@gradio/client: "Connection errored out").
    live.thread.join(timeout=30)
    assert isinstance(live.ended, httpx.RemoteProtocolError), live.ended
    assert "incomplete chunked read" in str(live.ended)
    assert not any('"process_completed"' in line for line in live.lines)

    llm.enqueue({"text": "Dashboard 42 is Revenue, answered again."})
    outputs = _retry(stack, token, cid, "Tell me about dashboard 42")

    assert text_of(outputs[-1]) == "Dashboard 42 is Revenue, answered again."
    survivor = next(a for a in stack.agents if a != victim)
    assert stack.upstreams("/queue/join", start)[-1] == survivor
    rows = history(http, token, cid)
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "Start here"),
        ("assistant", "First answer."),
        ("user", "Tell me about dashboard 42"),
        ("assistant", "Dashboard 42 is Revenue, answered again."),
    ]
    sent = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] != "system"]
    assert sent == [
        "Start here",
        "First answer.",
        "Tell me about dashboard 42",
    ]


class LiveStream:
    """One message sent the way @gradio/client sends it (queue/join, then the session's
    queue/data event stream), read in a thread; `ended` is what stopped the reading."""

    def __init__(self, gateway: str, token: str, cid: str, text: str) -> None:
        self.lines: list[str] = []
        self.ended: BaseException | None = None
        headers = {"Authorization": f"Bearer {token}"}
        self._client = httpx.Client(base_url=gateway + GRADIO, headers=headers, timeout=60)
        session = uuid.uuid4().hex[:11]
        data = [{"text": text, "files": []}, [], cid, "", "", ""]
        body = {"data": data, "fn_index": fn_index(gateway, token), "session_hash": session}
        joined = self._client.post("/gradio_api/queue/join", json=body)
        assert joined.status_code == 200, joined.text
        self.thread = threading.Thread(target=self._read, args=(session,), daemon=True)
        self.thread.start()

    def _read(self, session: str) -> None:
        params = {"session_hash": session}
        try:
            with self._client.stream("GET", "/gradio_api/queue/data", params=params) as stream:
                for line in stream.iter_lines():
                    self.lines.append(line)
        except httpx.HTTPError as exc:
            self.ended = exc
        finally:
            self._client.close()

    def wait_for(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            assert time.monotonic() < deadline and self.thread.is_alive(), self.lines[-3:]
            time.sleep(0.02)


def _retry(stack: Stack, token: str, cid: str, text: str) -> list[list[dict[str, object]]]:
    """Send `text` again through the gateway, as the client's Retry does (a fresh connection),
    until the dead process's lease has expired (AGENT__LEASE_TTL_S)."""
    deadline = time.monotonic() + 20
    while True:
        outputs = Chat(stack.gateway).send(token, cid, text)
        if error_code(outputs) != "CONVERSATION_BUSY" or time.monotonic() > deadline:
            return outputs
        time.sleep(0.5)
