"""The local gateway of `agent-chat up --agents N` (agent_chat/gateway.py): the production
template rendered with several replicas is accepted by the real nginx, and the replicas get
free ports from the ones asked for."""

from __future__ import annotations

import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from agent_chat import cli, gateway
from tests.support.processes import free_port


def test_several_replicas_render_to_a_config_nginx_accepts() -> None:
    binary = gateway.nginx_binary()
    if binary is None:
        pytest.skip("needs nginx")
    filled = gateway.values(
        listen=f"127.0.0.1:{free_port()}",
        backend="127.0.0.1:8000,127.0.0.1:8001",
        agent=["127.0.0.1:7860", "127.0.0.1:7861", "127.0.0.1:7862"],
        static_root=Path(__file__).parent,
    )
    assert filled["AGENT_SERVERS"].count("server 127.0.0.1:786") == 3
    assert "resolve" not in filled["AGENT_SERVERS"]  # IP addresses need no DNS
    with tempfile.TemporaryDirectory() as tmp:
        main = gateway.write_config(Path(tmp), filled)
        checked = subprocess.run(
            [binary, "-t", "-p", tmp, "-c", str(main), "-e", f"{tmp}/error.log"],
            capture_output=True,
            text=True,
            check=False,
        )
    assert checked.returncode == 0, checked.stderr
    assert "test is successful" in checked.stderr


def test_a_template_value_left_out_is_an_error() -> None:
    with pytest.raises(KeyError, match="AGENT_SERVERS"):
        gateway.render(gateway.TEMPLATE.read_text(), {"LISTEN": "1"})
    with pytest.raises(ValueError, match="at least one"):
        gateway.server_lines(" , ")


def test_replica_ports_are_consecutive_and_skip_ports_in_use() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        start = busy.getsockname()[1]
        taken = {start + 2}
        ports = cli._free_ports("127.0.0.1", start, 3, taken)
    assert start not in ports and start + 2 not in ports
    assert ports == sorted(ports) and len(set(ports)) == 3
    assert set(ports) <= taken  # given out: the next group does not get them again


def test_up_refuses_zero_agents(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["up", "--agents", "0"]) == 2
    assert "--agents and --backends need at least 1" in capsys.readouterr().err


class _Upstream:
    """A stand-in backend that records the headers of each request it gets."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        seen = self.seen = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, format: str, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_the_gateway_hides_metrics_and_passes_or_starts_a_trace(tmp_path: Path) -> None:
    import re

    import httpx

    from tests.e2e.gateway import run_gateway

    if gateway.nginx_binary() is None:
        pytest.skip("needs nginx")
    # nginx's workers must read the page: pytest's own folders are private to this user.
    holder = tempfile.TemporaryDirectory()
    static = Path(holder.name)
    static.chmod(0o755)
    (static / "index.html").write_text("<!doctype html><title>agent-chat</title>")
    (static / "index.html").chmod(0o644)
    upstream = _Upstream()
    try:
        with run_gateway(
            tmp_path / "nginx", backend=upstream.address, agent=upstream.address, static_root=static
        ) as url:
            assert httpx.get(url + "/metrics").status_code == 404
            given = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
            httpx.get(url + "/api/ping", headers={"traceparent": given})
            httpx.get(url + "/api/ping")
    finally:
        upstream.server.shutdown()
        upstream.server.server_close()
        holder.cleanup()
    passed, started = upstream.seen
    assert passed["traceparent"] == given
    assert re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-01", started["traceparent"])
    assert started["traceparent"][3:35] == started["x-request-id"]


def test_up_waits_for_every_readiness_check_before_it_prints_the_url() -> None:
    """`up` prints "open http://..." only after `_wait_ready`: here a process that answers 503
    (starting) three times, then 200, is waited for; one that dies ends the wait."""
    import sys
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    answers = [503, 503, 503, 200]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(answers.pop(0) if len(answers) > 1 else answers[0])
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ready = f"http://127.0.0.1:{server.server_address[1]}/readyz"
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        start = time.monotonic()
        cli._wait_ready([ready], [alive], timeout=30)
        assert answers == [200]  # it asked until the process said ready
        assert time.monotonic() - start >= 0.5
        with pytest.raises(cli.NotReady, match="not ready"):
            cli._wait_ready([f"http://127.0.0.1:{free_port()}/readyz"], [alive], timeout=1)
        dead = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
        dead.wait()
        with pytest.raises(cli.NotReady, match="exited with 3"):
            cli._wait_ready([ready.replace("readyz", "never")], [alive, dead], timeout=30)
    finally:
        alive.kill()
        alive.wait()
        server.shutdown()
        server.server_close()
