"""Diagnose a failing dashboard from its page: the chat opens, one diagnosis runs, and its card
links each finding to the tool card of the call it cites; the mode picker sends diagnoses too."""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from tests.e2e.conftest import login, open_chat, screenshot, send
from tests.fakes.llm_server import FakeLLM

LOGS, RUNBOOK = "call_e2e_logs", "call_e2e_runbook"
DRAFT = {
    "conclusion": {
        "summary": "Chart 'Conversions by campaign' selects campaign_id, renamed to utm_campaign",
        "confidence": "high",
    },
    "analysis": [
        {
            "finding": "Validation fails: no such column: campaign_id <img src=x onerror=alert(1)>",
            "evidence_status": "SUPPORTED",
            "tool_call_ids": [LOGS],
        },
        {
            "finding": "The runbook describes the rename and its fix",
            "evidence_status": "SUPPORTED",
            "tool_call_ids": [RUNBOOK],
        },
    ],
    "action_plan": ["Create a branch", "Replace campaign_id with utm_campaign", "Validate, deploy"],
    "recommendations": ["Follow the runbook"],
    "limitations": {"checked_scope": ["error logs of dashboard 17"], "missing_info": ["chart SQL"]},
}


def script_diagnosis(llm: FakeLLM) -> None:
    llm.enqueue(
        {
            "tool_calls": [
                {"id": LOGS, "name": "query_logs", "args": {"input": {"dashboard_id": 17}}}
            ]
        },
        {
            "tool_calls": [
                {
                    "id": RUNBOOK,
                    "name": "lookup_knowledge",
                    "args": {
                        "previous_observation": {"tool_call_id": LOGS, "assessment": "GAINED"},
                        "input": {"query": "no such column campaign_id"},
                    },
                }
            ]
        },
        {"text": json.dumps(DRAFT)},
    )


def test_diagnose_on_a_failing_dashboard_shows_a_card_whose_evidence_links_reach_the_tool_cards(
    page: Page, llm: FakeLLM
) -> None:
    script_diagnosis(llm)
    login(page)
    page.get_by_test_id("dashboard-link").filter(has_text="Marketing funnel").click()
    expect(page.get_by_test_id("dashboard")).to_have_attribute("data-dashboard-id", "17")

    page.get_by_test_id("diagnose").click()

    card = page.get_by_test_id("diagnosis-card")
    expect(card).to_have_attribute("data-outcome", "draft", timeout=30_000)
    expect(page.get_by_test_id("diagnosis-conclusion")).to_contain_text("utm_campaign")
    expect(page.get_by_test_id("diagnosis-confidence")).to_contain_text("high")
    expect(page.get_by_test_id("diagnosis-plan").locator("li")).to_have_count(3)
    expect(card).to_contain_text("<img src=x onerror=alert(1)>")  # shown as text
    assert card.locator("img").count() == 0
    tools = page.get_by_test_id("tool-card")
    expect(tools).to_have_count(2)
    for call_id, tool in ((LOGS, "query_logs"), (RUNBOOK, "lookup_knowledge")):
        link = card.locator(f'[data-testid="evidence-link"][data-call-id="{call_id}"]')
        expect(link).to_have_text(tool)
        link.click()
        target = page.locator(f'[data-testid="tool-card"][data-call-id="{call_id}"]')
        expect(target).to_have_attribute("data-highlighted", "true")
        expect(target).to_be_in_viewport()
    screenshot(page, "diagnosis-card")

    question = llm.requests[0]["messages"][1]["content"]
    assert json.loads(question)["query"] == "Why is dashboard #17 “Marketing funnel” failing?"
    assert page.get_by_test_id("user-message").last.inner_text().startswith("Why is dashboard #17")

    page.reload()  # the drawer stays open; the card comes back from the history
    expect(page.get_by_test_id("diagnosis-card")).to_have_attribute("data-outcome", "draft")
    expect(page.get_by_test_id("evidence-link")).to_have_count(2)


def test_the_composers_mode_picker_sends_a_diagnosis_and_a_failed_one_shows_its_code(
    page: Page, llm: FakeLLM
) -> None:
    # One call with evidence, then one that does not assess it (a repair, not run), then the
    # fake's default text "Done.", which is no draft.
    llm.enqueue(
        {"tool_calls": [{"id": "call_e2e_a", "name": "query_logs", "args": {"input": {}}}]},
        {"tool_calls": [{"id": "call_e2e_b", "name": "query_logs", "args": {"input": {}}}]},
    )
    login(page)
    open_chat(page)
    page.get_by_test_id("mode-picker").select_option("diagnose")
    expect(page.get_by_test_id("composer")).to_have_attribute(
        "placeholder", "Describe the problem to diagnose…"
    )
    send(page, "Why did validation fail today?")

    card = page.get_by_test_id("diagnosis-card")
    expect(card).to_have_attribute("data-outcome", "failed", timeout=30_000)
    expect(page.get_by_test_id("diagnosis-failed")).to_have_attribute("data-code", "INVALID_DRAFT")
    expect(page.get_by_test_id("diagnosis-checked").locator("li")).to_have_count(1)
    assert json.loads(llm.requests[0]["messages"][1]["content"])["query"] == (
        "Why did validation fail today?"
    )
