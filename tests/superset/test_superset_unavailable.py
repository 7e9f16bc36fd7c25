"""A Superset that does not answer: 503 SUPERSET_UNAVAILABLE from the backend, never a 500, and
a tool error with that code in the agent; the service account's password in neither."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.agent.support import Chat, of_type
from tests.backend.support import assert_error
from tests.fakes.llm_server import FakeLLM
from tests.support import superset
from tests.support.processes import free_port, serve
from tests.support.superset_build import BROKEN

Stack = tuple[str, str, Path]


@pytest.fixture(scope="module")
def unreachable(
    ss_env: dict[str, str], ss_llm: FakeLLM, synced: dict[str, int], tmp_path_factory
) -> Iterator[Stack]:
    """A backend and an agent on the synced platform whose Superset URLs answer nothing."""
    nowhere = f"http://127.0.0.1:{free_port()}"
    env = {**ss_env, "SUPERSET__STAGING__URL": nowhere, "SUPERSET__PRODUCTION__URL": nowhere}
    logs = tmp_path_factory.mktemp("unreachable")
    with serve(["backend"], env, health_path="/readyz", log_path=logs / "backend.log") as (
        backend,
        _,
    ):
        agent_env = {
            **env,
            "BACKEND_URL": backend,
            "LLM_API_BASE": ss_llm.url,
            "LLM_API_KEY": "fake-llm-key",
        }
        with serve(["agent"], agent_env, health_path="/healthz", log_path=logs / "agent.log") as (
            agent,
            _,
        ):
            yield backend, agent, logs


def test_an_unreachable_superset_is_503_superset_unavailable(unreachable, ss_as, synced):
    backend, _, logs = unreachable
    with httpx.Client(base_url=backend, timeout=60) as api:
        sync = api.post("/api/admin/superset/sync", headers=ss_as["admin"])
        assert_error(sync, 503, "SUPERSET_UNAVAILABLE")
        health = api.get(f"/api/dashboards/{synced[BROKEN.title]}/health", headers=ss_as["viewer"])
        assert_error(health, 503, "SUPERSET_UNAVAILABLE")
        assert superset.ADMIN_PASSWORD not in sync.text + health.text
        # What was synced before stays readable.
        listed = api.get("/api/dashboards", params={"limit": 200}, headers=ss_as["viewer"])
        assert {i["id"] for i in listed.json()["items"]} >= set(synced.values())
    assert superset.ADMIN_PASSWORD not in (logs / "backend.log").read_text()


def test_the_agent_gets_a_tool_error_with_that_code(unreachable, ss_as, ss_llm, ss_api, synced):
    _, agent, logs = unreachable
    cid = ss_api.post("/api/assistant/conversations", json={}, headers=ss_as["viewer"]).json()["id"]
    ss_llm.enqueue(
        {
            "tool_calls": [
                {"name": "dashboard_health", "args": {"dashboard_id": synced[BROKEN.title]}}
            ]
        },
        {"text": "Superset is down."},
    )
    token = ss_as["viewer"]["Authorization"].removeprefix("Bearer ")
    outputs = Chat(agent).send(token, cid, "Is Discount watch healthy?")
    (card,) = of_type(outputs[-1], "tool_error")
    assert card["metadata"]["error"]["code"] == "SUPERSET_UNAVAILABLE"
    assert superset.ADMIN_PASSWORD not in str(outputs) + (logs / "agent.log").read_text()
