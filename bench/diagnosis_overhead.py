"""What a diagnosis run costs the agent process besides the model and the backend: building
its agent (one `create_agent` per run, the three envelope tools) and a whole demo-model run
over a backend stub answering at once (protocol, projection, draft parsing).

    uv run python bench/diagnosis_overhead.py [--runs 50]

Prints a table of milliseconds per run (mean, p50, p95, max).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from langchain_core.messages import HumanMessage  # noqa: E402

from agent.config import DiagnosisSettings  # noqa: E402
from agent.context import Context  # noqa: E402
from agent.demo.model import DemoChatModel  # noqa: E402
from agent.diagnosis.envelope import evidence_tools  # noqa: E402
from agent.diagnosis.request import model_input  # noqa: E402
from agent.diagnosis.run import DiagnosisRun  # noqa: E402

LOG = {
    "id": 1,
    "created_at": "2026-11-30T08:00:00Z",
    "level": "error",
    "source": "dashboards.validation",
    "message": "Dashboard 17 (Marketing funnel): chart 'Conversions by campaign' failed "
    "validation: no such column: campaign_id",
    "dashboard_id": 17,
    "details": {"error": "no such column: campaign_id", "chart": "Conversions by campaign"},
}
ARTICLE = {"id": 3, "slug": "missing-column", "title": "Chart fails", "lang": "en", "snippet": "x"}


class StubBackend:
    """Answers the two reads of the demo's diagnosis at once."""

    async def call(self, context: Context, method: str, path: str, **kwargs: Any) -> Any:
        if path == "/api/logs":
            return {"items": [LOG] * 20, "total": 40}
        return {"items": [ARTICLE] * 5}


def build() -> DiagnosisRun:
    return DiagnosisRun(
        DiagnosisSettings(),
        model=DemoChatModel(),
        tools=evidence_tools(StubBackend()),  # type: ignore[arg-type]
        cancelled=lambda: False,
    )


async def whole_run() -> None:
    run = build()
    context = Context(
        user_token="bench",
        user_id="u",
        username="bench",
        roles=("viewer",),
        conversation_id="c",
        run_id=run.run_id,
    )
    message = HumanMessage(model_input("Why is dashboard 17 failing?", focus=None, previous=None))
    result = await run.agent.ainvoke(
        {"messages": [message]},
        {"recursion_limit": run.recursion_limit},
        context=context,
    )
    outcome = run.concluded(result["messages"][-1].text)
    assert outcome.outcome == "draft", outcome


def timed(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return (
        f"{statistics.mean(ordered):8.1f} {statistics.median(ordered):8.1f} "
        f"{p95:8.1f} {ordered[-1]:8.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args().runs
    build()  # warm imports and schema caches
    builds, wholes = [], []
    for _ in range(runs):
        started = time.perf_counter()
        build()
        builds.append((time.perf_counter() - started) * 1000)
    for _ in range(runs):
        started = time.perf_counter()
        asyncio.run(whole_run())
        wholes.append((time.perf_counter() - started) * 1000)
    print(f"{'ms per run':<42} {'mean':>8} {'p50':>8} {'p95':>8} {'max':>8}")
    print(f"{'build (create_agent + tools)':<42} {timed(builds)}")
    print(f"{'whole demo run, stub backend (3 rounds)':<42} {timed(wholes)}")
    print(f"runs: {runs}")


if __name__ == "__main__":
    main()
