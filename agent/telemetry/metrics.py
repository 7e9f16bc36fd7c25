"""The agent's Prometheus metrics (CONTRACT.md, "Operations: metrics, traces, logs")."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

_LATENCY = (0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60, 120)

RUNS = Counter("agent_runs_total", "Runs ended, by mode and outcome", ("mode", "outcome"))
ACTIVE = Gauge("agent_active_runs", "Runs in progress in this process")
FIRST_TOKEN = Histogram(
    "agent_first_token_seconds",
    "From the run's start to its first text or card",
    ("mode",),
    buckets=_LATENCY,
)
TURN = Histogram(
    "agent_turn_seconds", "From the run's start to its end", ("mode",), buckets=(*_LATENCY, 300)
)
MODEL_CALLS = Counter("agent_model_calls_total", "Model calls started")
TOOL_CALLS = Counter("agent_tool_calls_total", "Tool calls ended", ("tool", "status"))
TOKENS = Counter(
    "agent_llm_tokens_total", "Tokens the model reported (kind: input, output)", ("kind",)
)
START_WAIT = Histogram(
    "agent_run_start_wait_seconds",
    "How long a run waited for a start slot (agent.start_slots) before it began",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5),
)
