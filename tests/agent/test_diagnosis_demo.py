"""The offline demo model in diagnosis mode, inside the real diagnosis agent with the real
envelope tools against the real backend: dashboard 17 gets a draft citing the logs and the
runbook it found, following the protocol; a healthy dashboard gets no conclusion."""

from __future__ import annotations

import dataclasses
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from agent.backend_client import BackendClient
from agent.config import DiagnosisSettings
from agent.context import Context
from agent.demo.model import DemoChatModel
from agent.diagnosis.envelope import evidence_tools
from agent.diagnosis.request import model_input
from agent.diagnosis.run import DiagnosisOutcome, DiagnosisRun
from tests.agent import _tools_fixtures as fixtures
from tests.agent._diagnosis import audited

backend_client = fixtures.backend_client
contexts = fixtures.contexts
recorder = fixtures.recorder


async def diagnose(
    client: BackendClient, context: Context, query: str, focus: dict[str, Any] | None = None
) -> tuple[DiagnosisOutcome, list[Any]]:
    run = DiagnosisRun(
        DiagnosisSettings(),
        model=DemoChatModel(),
        tools=evidence_tools(client),
    )
    message = HumanMessage(model_input(query, focus=focus, previous=None))
    result = await run.agent.ainvoke(
        {"messages": [message]},
        {"recursion_limit": run.recursion_limit},
        context=dataclasses.replace(context, audit_run_id=run.run_id),
    )
    final = result["messages"][-1]
    assert isinstance(final, AIMessage)
    return run.concluded(final.text), result["messages"]


async def test_on_dashboard_17_the_demo_gathers_logs_then_the_runbook_and_cites_both(
    backend_client, contexts, database_url
):
    outcome, messages = await diagnose(
        backend_client, contexts["viewer"], "Why is dashboard 17 failing?"
    )

    assert outcome.outcome == "draft" and outcome.draft is not None
    calls = [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    assert [c["name"] for c in calls] == ["query_logs", "lookup_knowledge"]
    assert calls[1]["args"]["previous_observation"] == {
        "tool_call_id": calls[0]["id"],
        "assessment": "GAINED",
    }
    cited = [i for finding in outcome.draft.analysis for i in finding.tool_call_ids]
    assert cited == [calls[0]["id"], calls[1]["id"]]
    assert outcome.draft.conclusion is not None
    assert "campaign_id" in outcome.draft.conclusion.summary
    assert "runbook" in outcome.draft.analysis[1].finding.lower()
    assert audited(database_url, outcome.run_id) == [
        ("logs.search", "success"),
        ("knowledge.search", "success"),
    ]


async def test_on_a_healthy_dashboard_the_demo_concludes_nothing_and_says_what_it_checked(
    backend_client, contexts
):
    focus = {"kind": "dashboard", "id": 42, "title": "Sales overview"}
    outcome, _ = await diagnose(
        backend_client, contexts["viewer"], "Почему этот дашборд падает?", focus
    )

    assert outcome.outcome == "draft" and outcome.draft is not None
    assert outcome.draft.conclusion is None
    (finding,) = outcome.draft.analysis
    assert finding.evidence_status == "NEGATIVE_OBSERVATION" and "42" in finding.finding
    assert outcome.draft.limitations.checked_scope and outcome.draft.limitations.missing_info
    assert "Журнал" in outcome.draft.limitations.checked_scope[0]


async def test_without_a_dashboard_the_demo_calls_no_tool_and_names_what_is_missing(
    backend_client, contexts
):
    outcome, messages = await diagnose(backend_client, contexts["viewer"], "Something is off")

    assert not [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
    assert outcome.draft is not None and outcome.draft.conclusion is None
    assert outcome.draft.limitations.missing_info == ["Which dashboard to check (its id)."]
