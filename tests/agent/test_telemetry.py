"""What an operator reads, over the real processes: each process's `/metrics`, the traces both
export over OTLP/HTTP to a receiver this test runs, and the backend's JSON log lines
(CONTRACT.md, "Operations: metrics, traces, logs")."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from gradio_client import Client
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.parser import text_string_to_metric_families

from tests.agent.support import GRADIO, Chat, collect, text_of
from tests.conftest import AGENT_CLIENT_SECRET, PASSWORDS, login
from tests.fakes.llm_server import FakeLLM, _usage
from tests.support.processes import serve

pytestmark = pytest.mark.timeout(600)  # a backend and an agent of its own start first


class Receiver:
    """An OTLP/HTTP trace receiver: every span it was sent, flattened."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.add(request)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def add(self, request: ExportTraceServiceRequest) -> None:
        found = []
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append(
                        {
                            "service": resource.get("service.name"),
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent": span.parent_span_id.hex(),
                            "attributes": {a.key: _value(a.value) for a in span.attributes},
                        }
                    )
        with self._lock:
            self.spans.extend(found)

    def trace(self, trace_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return [s for s in self.spans if s["trace_id"] == trace_id]

    def wait(self, predicate: Any, timeout: float = 20) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                spans = list(self.spans)
            if predicate(spans):
                return spans
            time.sleep(0.2)
        raise AssertionError(f"spans never matched; got {[s['name'] for s in spans]}")


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    r.thread.start()
    yield r
    r.server.shutdown()
    r.server.server_close()


def _otel(receiver: Receiver) -> dict[str, str]:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100"}


@pytest.fixture(scope="module")
def traced_backend(
    seeded: dict[str, str], receiver: Receiver, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    log = tmp_path_factory.mktemp("traced") / "backend.log"
    env = {**seeded, **_otel(receiver), "LOG_FORMAT": "json", "LOG_LEVEL": "INFO"}
    with serve(["backend"], env, health_path="/readyz", log_path=log) as (base, _proc):
        yield base, log


@pytest.fixture(scope="module")
def traced_agent(
    seeded: dict[str, str],
    traced_backend: tuple[str, Path],
    fake_llm: FakeLLM,
    receiver: Receiver,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    log = tmp_path_factory.mktemp("traced") / "agent.log"
    env = {
        **seeded,
        **_otel(receiver),
        "BACKEND_URL": traced_backend[0],
        "LLM_API_BASE": fake_llm.url,
        "LLM_API_KEY": "fake-llm-key",
    }
    with serve(["agent"], env, health_path="/readyz", log_path=log) as (base, _proc):
        yield base


@pytest.fixture(scope="module")
def token(traced_backend: tuple[str, Path]) -> str:
    with httpx.Client(base_url=traced_backend[0], timeout=30) as api:
        return login(api, "admin", PASSWORDS["admin"])


def _conversation(backend: str, token: str) -> str:
    response = httpx.post(
        backend + "/api/assistant/conversations",
        json={},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(url + "/metrics", timeout=10).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _delta(before: dict[Any, float], after: dict[Any, float], name: str, **labels: str) -> float:
    """The increase of `name` summed over the series whose labels include `labels`."""

    def total(samples: dict[Any, float]) -> float:
        return sum(
            value
            for (n, ls), value in samples.items()
            if n == name and set(labels.items()) <= set(ls)
        )

    return total(after) - total(before)


TOOL_TURN = (
    {
        "text": "Let me look.",
        "tool_calls": [{"name": "get_dashboard", "args": {"dashboard_id": 42}}],
    },
    {"text": "It is the sales overview."},
)


def test_metrics_count_the_runs_calls_and_tokens(
    traced_agent: str, traced_backend: tuple[str, Path], token: str, fake_llm: FakeLLM
) -> None:
    chat = Chat(traced_agent)
    agent_before, backend_before = _samples(traced_agent), _samples(traced_backend[0])
    fake_llm.enqueue(*TOOL_TURN, {"text": "Plain answer here."})

    tool_turn = chat.send(token, _conversation(traced_backend[0], token), "Is dashboard 42 ok?")
    plain = chat.send(token, _conversation(traced_backend[0], token), "Say something plain")

    assert "sales overview" in text_of(tool_turn[-1])
    assert text_of(plain[-1]) == "Plain answer here."
    requests = fake_llm.requests
    assert len(requests) == 3
    agent_after = _samples(traced_agent)
    assert _delta(agent_before, agent_after, "agent_runs_total", outcome="completed") == 2
    assert _delta(agent_before, agent_after, "agent_model_calls_total") == 3
    tool = _delta(agent_before, agent_after, "agent_tool_calls_total", tool="get_dashboard")
    assert tool == 1
    ok = _delta(
        agent_before, agent_after, "agent_tool_calls_total", tool="get_dashboard", status="ok"
    )
    assert ok == 1
    assert _delta(agent_before, agent_after, "agent_first_token_seconds_count") == 2
    assert _delta(agent_before, agent_after, "agent_turn_seconds_count") == 2
    assert agent_after[("agent_active_runs", ())] == 0
    # The usage the fake model reported: completion = one per word chunk and tool call.
    prompt = sum(_usage(r, 0, {})["prompt_tokens"] for r in requests)
    assert (
        _delta(agent_before, agent_after, "agent_llm_tokens_total", kind="output") == 3 + 1 + 5 + 3
    )
    assert _delta(agent_before, agent_after, "agent_llm_tokens_total", kind="input") == prompt

    backend_after = _samples(traced_backend[0])
    route = "/api/dashboards/{dashboard_id}"
    got = _delta(backend_before, backend_after, "http_requests_total", route=route, method="GET")
    assert got == 1
    assert (
        _delta(backend_before, backend_after, "http_request_duration_seconds_count", route=route)
        == 1
    )
    assert not any("/42" in dict(ls).get("route", "") for (_n, ls) in backend_after)


def test_a_traceparent_is_continued_to_the_model_tool_and_sql_spans(
    traced_agent: str,
    traced_backend: tuple[str, Path],
    token: str,
    fake_llm: FakeLLM,
    receiver: Receiver,
) -> None:
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)
    client = Client(
        traced_agent + GRADIO,
        headers={"Authorization": f"Bearer {token}", "traceparent": f"00-{trace_id}-{parent}-01"},
        verbose=False,
        download_files=False,
    )
    fake_llm.enqueue(*TOOL_TURN)
    cid = _conversation(traced_backend[0], token)

    collect(
        client.submit(
            message={"text": "Is dashboard 42 ok?", "files": []},
            conversation_id=cid,
            action="",
            focus="",
            options="{}",
            api_name="/chat",
        )
    )

    def complete(_spans: list[dict[str, Any]]) -> bool:
        # Each process exports in batches: a backend span can arrive before the agent's
        # request span it hangs from, so the trace is complete once no span is an orphan.
        spans = receiver.trace(trace_id)
        ids = {s["span_id"] for s in spans}
        backend = [s for s in spans if s["service"] == "agent-chat-backend"]
        return (
            any("db.system" in s["attributes"] for s in backend)
            and any(s["name"].startswith("invoke_agent") for s in spans)
            and all(s["parent"] in ids for s in backend)
        )

    receiver.wait(complete)
    spans = receiver.trace(trace_id)
    services = {s["service"] for s in spans}
    assert services == {"agent-chat-agent", "agent-chat-backend"}
    turn = next(s for s in spans if s["name"].startswith("invoke_agent"))
    assert turn["parent"] == parent
    models = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    assert len(models) == 2
    for span in models:
        assert span["attributes"]["gen_ai.request.model"]
        assert span["attributes"]["gen_ai.usage.input_tokens"] > 0
        assert span["attributes"]["gen_ai.usage.output_tokens"] > 0
        assert span["parent"] == turn["span_id"]
    tools = [s for s in spans if s["name"] == "execute_tool get_dashboard"]
    assert len(tools) == 1 and tools[0]["parent"] == turn["span_id"]
    ids = {s["span_id"] for s in spans}
    backend = [s for s in spans if s["service"] == "agent-chat-backend"]
    assert any(
        s["attributes"].get("http.route") == "/api/dashboards/{dashboard_id}" for s in backend
    )
    assert all(s["parent"] in ids for s in backend)  # one tree, nothing orphaned

    # The backend's JSON lines of that turn carry its trace id and a request id, no secret.
    lines = [line for line in traced_backend[1].read_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    mine = [r for r in records if r.get("trace_id") == trace_id]
    assert mine and all(r.get("request_id") for r in mine)
    text = traced_backend[1].read_text()
    assert token not in text and "eyJ" not in text
    assert all(password not in text for password in PASSWORDS.values())


def test_a_turn_without_traceparent_starts_its_own_trace(
    traced_agent: str,
    traced_backend: tuple[str, Path],
    token: str,
    fake_llm: FakeLLM,
    receiver: Receiver,
) -> None:
    fake_llm.enqueue({"text": "Hello there."})
    cid = _conversation(traced_backend[0], token)

    Chat(traced_agent).send(token, cid, "Hi")

    def turn_of(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [s for s in spans if s["attributes"].get("gen_ai.conversation.id") == cid]

    turn = turn_of(receiver.wait(lambda spans: bool(turn_of(spans))))[0]
    assert turn["parent"] == ""
    spans = receiver.wait(
        lambda _s: any(s["name"].startswith("chat ") for s in receiver.trace(turn["trace_id"]))
    )
    assert any(s["name"].startswith("chat ") and s["trace_id"] == turn["trace_id"] for s in spans)


def test_metrics_is_served_on_each_process_port(
    traced_agent: str, traced_backend: tuple[str, Path]
) -> None:
    backend_url = traced_backend[0]
    for url in (traced_agent, backend_url):
        response = httpx.get(url + "/metrics", timeout=10)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
    assert "agent_runs_total" in httpx.get(traced_agent + "/metrics", timeout=10).text
    assert "http_requests_total" in httpx.get(backend_url + "/metrics", timeout=10).text


def test_a_turn_asks_the_backend_only_what_it_needs(
    traced_agent: str, traced_backend: tuple[str, Path], token: str, fake_llm: FakeLLM
) -> None:
    """Counted on the backend's own metrics: a new conversation's turn reads no history and
    cancels no workflow (the lease answer says there is neither); a conversation whose
    history has rows but whose thread has no checkpoint still recalls them."""
    backend, chat = traced_backend[0], Chat(traced_agent)
    base = "/api/assistant/conversations/{conversation_id}"
    lease = "/api/agent/conversations/{conversation_id}/lease"

    def count(before: dict[Any, float], after: dict[Any, float], method: str, route: str) -> float:
        return _delta(before, after, "http_requests_total", method=method, route=route)

    fake_llm.enqueue({"text": "First answer."}, {"text": "Second answer."})
    cid = _conversation(backend, token)
    before = _samples(backend)
    assert text_of(chat.send(token, cid, "Hello")[-1]) == "First answer."
    after = _samples(backend)
    assert count(before, after, "PUT", lease) == 1
    # the answer's row, its debug record, the usage and the release: one request at the end
    end = "/api/agent/conversations/{conversation_id}/end"
    assert count(before, after, "POST", end) == 1
    assert count(before, after, "DELETE", lease) == 0
    assert count(before, after, "PUT", "/api/debug/{message_id}") == 0
    assert count(before, after, "POST", "/api/agent/usage") == 0
    assert count(before, after, "POST", base + "/messages") == 1  # the question
    assert count(before, after, "GET", base + "/history") == 0
    waiting = "/api/workflow/conversations/{conversation_id}/executions/cancel-waiting"
    assert count(before, after, "POST", waiting) == 0

    # History rows without a checkpoint (as after checkpoint retention): they are recalled.
    other = _conversation(backend, token)
    with httpx.Client(base_url=backend, timeout=30) as api:
        service = api.post(
            "/api/auth/service-token",
            json={"client_id": "agent-chat", "client_secret": AGENT_CLIENT_SECRET},
        ).json()["access_token"]
        agent = {"Authorization": f"Bearer {service}", "X-On-Behalf-Of": token}
        row = {"role": "user", "content": "My favourite dashboard is 42.", "metadata": {}}
        added = api.post(f"/api/assistant/conversations/{other}/messages", json=row, headers=agent)
        assert added.status_code == 201, added.text
    before = _samples(backend)
    assert text_of(chat.send(token, other, "Which one is my favourite?")[-1]) == "Second answer."
    assert count(before, _samples(backend), "GET", base + "/history") == 1
    sent = [m.get("content") for m in fake_llm.requests[-1]["messages"]]
    assert "My favourite dashboard is 42." in sent
