"""The metrics-and-traces hook of every run (agent/hooks.py).

Everything here happens once per run, per model call or per tool call, never per token: the
callback handler runs inline (no thread hop) and leaves LangChain's per-token event a no-op.
Token counts come from the usage the model reports at the end of its call (`stream_usage`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from agent.hooks import HookFactory, RunHooks, RunInfo, RunOutcome
from agent.telemetry import metrics
from common import observability

TRACER_NAME = "agent-chat.agent"


def factory(tracing: bool) -> HookFactory:
    """The hook factory for Runner(hooks=[...]); spans only when `tracing`."""
    tracer = trace.get_tracer(TRACER_NAME) if tracing else None

    def build(info: RunInfo) -> RunHooks:
        return TelemetryHooks(info, tracer)

    return build


class TelemetryHooks(RunHooks):
    def __init__(self, info: RunInfo, tracer: trace.Tracer | None) -> None:
        super().__init__(info)
        self.tracer = tracer
        self.start = time.perf_counter()
        self.span: Span | None = None
        self.handler = _Calls(self)
        self.first_seen = False

    @contextlib.contextmanager
    def around(self) -> Iterator[None]:
        headers = {k.lower(): v for k, v in self.info.headers.items()}
        rid, tid = observability.ids_from_headers(headers)
        rid_token = observability.request_id.set(rid)
        tid_token = observability.trace_id.set(tid)
        attached = None
        if self.tracer is not None:
            parent = propagate.extract(headers)
            self.span = self.tracer.start_span(
                "invoke_agent agent-chat",
                context=parent,
                kind=SpanKind.SERVER,
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "agent-chat",
                    "agent_chat.run_id": self.info.run_id,
                    "agent_chat.mode": self.info.mode,
                    "agent_chat.action": self.info.action,
                    "gen_ai.conversation.id": self.info.context.conversation_id,
                },
            )
            attached = otel_context.attach(trace.set_span_in_context(self.span, parent))
        self.start = time.perf_counter()
        metrics.ACTIVE.inc()
        try:
            yield
        except BaseException as exc:
            if self.span is not None:
                self.span.record_exception(exc)
            raise
        finally:
            metrics.ACTIVE.dec()
            if self.span is not None:
                self.span.end()
            if attached is not None:
                otel_context.detach(attached)
            observability.trace_id.reset(tid_token)
            observability.request_id.reset(rid_token)

    def callbacks(self) -> Sequence[BaseCallbackHandler]:
        return (self.handler,)

    def first_output(self) -> None:
        if not self.first_seen:
            self.first_seen = True
            elapsed = time.perf_counter() - self.start
            metrics.FIRST_TOKEN.labels(self.info.mode).observe(elapsed)

    def finished(self, outcome: RunOutcome, messages: Sequence[Mapping[str, Any]]) -> None:
        metrics.RUNS.labels(self.info.mode, outcome.value).inc()
        metrics.TURN.labels(self.info.mode).observe(time.perf_counter() - self.start)
        if self.span is not None:
            self.span.set_attribute("agent_chat.outcome", outcome.value)
            if outcome is RunOutcome.ERROR:
                self.span.set_status(Status(StatusCode.ERROR))

    def child(self, name: str, attributes: dict[str, Any]) -> Span | None:
        if self.tracer is None or self.span is None:
            return None
        parent = trace.set_span_in_context(self.span)
        return self.tracer.start_span(
            name, context=parent, kind=SpanKind.CLIENT, attributes=attributes
        )


def _model_name(metadata: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> str:
    params = kwargs.get("invocation_params") or {}
    name = (metadata or {}).get("ls_model_name") or params.get("model") or params.get("model_name")
    return str(name or "unknown")


def _usage(response: LLMResult) -> tuple[int, int]:
    """(input, output) tokens the model reported for this call."""
    given, made = 0, 0
    for generations in response.generations:
        for generation in generations:
            usage = getattr(getattr(generation, "message", None), "usage_metadata", None)
            if usage:
                given += int(usage.get("input_tokens", 0) or 0)
                made += int(usage.get("output_tokens", 0) or 0)
    if not (given or made) and response.llm_output:
        usage = response.llm_output.get("token_usage") or {}
        given = int(usage.get("prompt_tokens", 0) or 0)
        made = int(usage.get("completion_tokens", 0) or 0)
    return given, made


class _Calls(BaseCallbackHandler):
    """Model and tool calls of one run. Inline: no executor hop for any event, the per-token
    one included (it stays the base class's no-op)."""

    run_inline = True
    raise_error = False
    # and deaf to chain events: a turn has dozens (every graph node and middleware step);
    # tool events come under `ignore_agent`, which stays off
    ignore_chain = True
    ignore_retriever = True
    ignore_retry = True
    ignore_custom_event = True

    def __init__(self, hooks: TelemetryHooks) -> None:
        self.hooks = hooks
        self.spans: dict[UUID, Span] = {}
        self.tools: dict[UUID, str] = {}

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        metrics.MODEL_CALLS.inc()
        model = _model_name(metadata, kwargs)
        span = self.hooks.child(
            f"chat {model}",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.system": str((metadata or {}).get("ls_provider") or "openai"),
                "gen_ai.request.model": model,
            },
        )
        if span is not None:
            self.spans[run_id] = span

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        given, made = _usage(response)
        if given:
            metrics.TOKENS.labels("input").inc(given)
        if made:
            metrics.TOKENS.labels("output").inc(made)
        span = self.spans.pop(run_id, None)
        if span is not None:
            span.set_attribute("gen_ai.usage.input_tokens", given)
            span.set_attribute("gen_ai.usage.output_tokens", made)
            span.end()

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        span = self.spans.pop(run_id, None)
        if span is not None:
            span.set_status(Status(StatusCode.ERROR, type(error).__name__))
            span.end()

    def on_tool_start(
        self, serialized: dict[str, Any], input_str: str, *, run_id: UUID, **kwargs: Any
    ) -> None:
        name = str((serialized or {}).get("name") or kwargs.get("name") or "unknown")
        self.tools[run_id] = name
        # No arguments on the span: a query or a path is the user's data, not the operator's.
        span = self.hooks.child(
            f"execute_tool {name}",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name},
        )
        if span is not None:
            self.spans[run_id] = span

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        failed = getattr(output, "status", "success") == "error"
        self._tool_done(run_id, "error" if failed else "ok")

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._tool_done(run_id, "error")

    def _tool_done(self, run_id: UUID, status: str) -> None:
        name = self.tools.pop(run_id, "unknown")
        metrics.TOOL_CALLS.labels(name, status).inc()
        span = self.spans.pop(run_id, None)
        if span is not None:
            if status == "error":
                span.set_status(Status(StatusCode.ERROR))
            span.end()
