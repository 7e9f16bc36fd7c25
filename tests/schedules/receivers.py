"""Real receivers for deliveries: an aiosmtpd SMTP server that keeps what it receives, and an
HTTP server that keeps each webhook request (and can refuse the first N)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller

from tests.support.processes import free_port


@dataclass
class Mailbox:
    """What the SMTP server received: (envelope recipients, message text)."""

    messages: list[tuple[list[str], str]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        del server, session
        self.messages.append((list(envelope.rcpt_tos), envelope.content.decode("utf-8", "replace")))
        return "250 Message accepted for delivery"


class SmtpServer:
    def __init__(self) -> None:
        self.mailbox = Mailbox()
        self.port = free_port()
        self._controller = Controller(self.mailbox, hostname="127.0.0.1", port=self.port)

    def start(self) -> SmtpServer:
        self._controller.start()
        return self

    def stop(self) -> None:
        self._controller.stop()


@dataclass
class Hook:
    """One webhook request as received."""

    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class WebhookReceiver:
    """Keeps every POST; answers 500 to the first `fail_first` of each path, 200 after."""

    def __init__(self) -> None:
        self.received: list[Hook] = []
        self.fail_first: dict[str, int] = {}
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._lock:
                    receiver.received.append(Hook(self.path, dict(self.headers), body))
                    seen = sum(1 for h in receiver.received if h.path == self.path)
                    failing = seen <= receiver.fail_first.get(self.path, 0)
                self.send_response(500 if failing else 200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                del args

        self.port = free_port()
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def at(self, path: str) -> list[Hook]:
        with self._lock:
            return [h for h in self.received if h.path == path]

    def start(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
