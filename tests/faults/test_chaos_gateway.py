"""The chaos soak's eighth invariant (bench/chaos_gateway.py), on a real nginx-free HTTP
server: every answer is counted, only the gateway's own 502/503/504 and connection errors are
failures, and a failure is excused only while every replica of a kind was down."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from bench.chaos_gateway import Counting, Failure, Outage, Tally, all_down, violations
from tests.support.processes import free_port


@pytest.fixture(autouse=True)
def _fresh_script() -> None:
    """No stack here: the fault suite's shared one is not needed."""


class _Answers(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status = int(self.path.strip("/"))
        json_body = status == 503  # a replica's own 503 (an envelope), not the gateway's
        body = json.dumps({"error": {}}).encode() if json_body else b"<html>bad gateway</html>"
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if json_body else "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_every_answer_is_counted_and_only_the_gateways_own_errors_are_failures() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tally = Tally()
    try:
        with httpx.Client(transport=Counting(tally)) as client:
            base = f"http://127.0.0.1:{server.server_address[1]}"
            for status in (200, 404, 502, 503, 504):
                client.get(f"{base}/{status}")
            with pytest.raises(httpx.ConnectError):
                client.get(f"http://127.0.0.1:{free_port()}/")
    finally:
        server.shutdown()
        server.server_close()
    assert tally.answers == {"200": 1, "404": 1, "502": 1, "503": 1, "504": 1, "ConnectError": 1}
    assert [(f.path, f.what) for f in tally.failures] == [
        ("/502", "502"),
        ("/504", "504"),
        ("/", "ConnectError"),
    ]


def test_a_failure_is_excused_only_while_every_replica_of_a_kind_was_down() -> None:
    outages = [
        Outage("backend", "backend:1", 10.0, 20.0),
        Outage("backend", "backend:2", 15.0, 30.0),  # both backends down from 15 to 20
        Outage("agent", "agent:1", 40.0, None),  # the other agent alive all along
    ]
    replicas = {"backend": 2, "agent": 2}
    assert all_down(outages, replicas) == [(15.0, 20.0)]
    failures = [
        Failure("POST", "/api/x", "502", 16.0, 16.5),  # excused: no backend alive
        Failure("GET", "/api/y", "502", 11.0, 11.2),  # one backend alive: a violation
        Failure("POST", "/api/agent/gradio/z", "ConnectError", 45.0, 45.1),  # a violation
    ]
    found = violations(failures, outages, replicas)
    assert len(found) == 2
    assert "GET /api/y: 502" in found[0] and "ConnectError" in found[1]
