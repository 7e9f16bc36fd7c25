"""What both processes share for an operator: the log format and the trace exporter.

- `LOG_FORMAT=json`: one JSON object a line on stderr, with the `request_id` and `trace_id` of
  the request (or agent run) being served; the text format stays the default.
- Traces: an OpenTelemetry SDK tracer provider exporting over OTLP/HTTP, only when
  `OTEL_EXPORTER_OTLP_ENDPOINT` is set; otherwise nothing is installed and the OpenTelemetry
  API stays its no-op self (CONTRACT.md, "Operations: metrics, traces, logs").
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import re
import secrets
import sys
import time
from collections.abc import Iterator, Mapping
from typing import Any

from opentelemetry import trace

# Set while a request (backend, agent) or an agent run is being served.
request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")
trace_id: contextvars.ContextVar[str] = contextvars.ContextVar("trace_id", default="")

_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_SECRET_KV = re.compile(r"(?i)(password|secret|api_key|authorization)([\"']?\s*[:=]\s*)\S+")
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")


def json_logs() -> bool:
    return os.environ.get("LOG_FORMAT", "text").strip().lower() == "json"


def tracing_enabled() -> bool:
    return bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip())


def redact(text: str) -> str:
    """No JWT and no password-like value in a log line, whatever logged it."""
    return _SECRET_KV.sub(r"\1\2[redacted]", _JWT.sub("[jwt]", text))


def current_trace_id() -> str:
    """The active span's trace id (tracing on), else the one the request brought or was given."""
    ctx = trace.get_current_span().get_span_context()
    if ctx.is_valid:
        return format(ctx.trace_id, "032x")
    return trace_id.get()


def ids_from_headers(headers: Mapping[str, str]) -> tuple[str, str]:
    """(request_id, trace_id) for a request: X-Request-ID and the W3C traceparent's trace id
    when they are sane, fresh random ones otherwise (logs of one request stay joinable)."""
    rid = headers.get("x-request-id", "")
    if not (0 < len(rid) <= 64 and rid.isascii() and rid.isprintable()):
        rid = secrets.token_hex(16)
    match = _TRACEPARENT.match(headers.get("traceparent", "").strip().lower())
    tid = match.group(1) if match and match.group(1) != "0" * 32 else secrets.token_hex(16)
    return rid, tid


@contextlib.contextmanager
def request_ids(scope: Mapping[str, Any]) -> Iterator[str]:
    """Bind the request id and trace id of an ASGI HTTP request (from its headers) to every log
    line written while it is served; yields the request id."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    rid, tid = ids_from_headers(headers)
    rid_token = request_id.set(rid)
    tid_token = trace_id.set(tid)
    try:
        yield rid
    finally:
        trace_id.reset(tid_token)
        request_id.reset(rid_token)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, request_id, trace_id."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        rid, tid = request_id.get(), current_trace_id()
        if rid:
            entry["request_id"] = rid
        if tid:
            entry["trace_id"] = tid
        if record.exc_info:
            entry["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(level: str) -> None:
    """The root logger on stderr, in the format LOG_FORMAT names."""
    handler = logging.StreamHandler(sys.stderr)
    if json_logs():
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())


def uvicorn_log_config() -> dict[str, Any] | None:
    """uvicorn's own log config for the text format; none (its loggers reach the root handler,
    in JSON) when LOG_FORMAT=json."""
    if json_logs():
        return None
    from uvicorn.config import LOGGING_CONFIG

    return LOGGING_CONFIG


def install_tracer_provider(default_service: str) -> bool:
    """Export spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set; False (nothing
    installed, nothing paid) otherwise."""
    if not tracing_enabled():
        return False
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = os.environ.get("OTEL_SERVICE_NAME", "").strip() or default_service
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return True


def shutdown_tracer_provider() -> None:
    """Send what is still buffered (at shutdown)."""
    provider = trace.get_tracer_provider()
    shutdown = getattr(provider, "shutdown", None)
    if callable(shutdown):
        shutdown()
