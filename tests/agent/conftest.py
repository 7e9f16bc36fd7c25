"""Agent tests: the scripted fake LLM (in this process), the real backend and the real agent
process (`agent-chat agent`), driven over Gradio's API with real user JWTs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agent.support import Chat
from tests.conftest import bearer
from tests.fakes.llm_server import FakeLLM
from tests.support.processes import serve


@pytest.fixture(scope="session")
def fake_llm() -> Iterator[FakeLLM]:
    llm = FakeLLM().start()
    yield llm
    llm.stop()


@pytest.fixture(autouse=True)
def _fresh_script(request: pytest.FixtureRequest) -> None:
    """A test that talks to the fake LLM (itself or through an agent) starts from an empty
    script; a test that needs no model (tests/agent/unit/) never starts the server."""
    if "fake_llm" in request.fixturenames:
        request.getfixturevalue("fake_llm").reset()


@pytest.fixture(scope="session")
def agent_env(seeded: dict[str, str], backend_url: str, fake_llm: FakeLLM) -> dict[str, str]:
    """What an agent process of the suite runs with."""
    return {
        **seeded,
        "BACKEND_URL": backend_url,
        "LLM_API_BASE": fake_llm.url,
        "LLM_API_KEY": "fake-llm-key",
        "LLM__REQUEST_TIMEOUT_S": "1.5",
        "AGENT__MAX_MODEL_CALLS": "6",
        "AGENT__MAX_TOOL_CALLS": "8",
        # Diagnosis runs of the suite (tests/agent/test_diagnosis*.py)
        "DIAGNOSIS__MAX_MODEL_CALLS": "4",
        "DIAGNOSIS__MAX_QUERY_BYTES": "300",
        "DIAGNOSIS__SATURATION_THRESHOLD": "2",
        "DIAGNOSIS__MAX_PROTOCOL_VIOLATIONS": "2",
    }


AgentProcess = Callable[..., Any]


@pytest.fixture(scope="session")
def start_agent(
    agent_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> AgentProcess:
    """A context manager running one more agent process: yields (base_url, process)."""
    logs = tmp_path_factory.mktemp("agent-logs")

    @contextmanager
    def start(**extra_env: str) -> Iterator[tuple[str, Any]]:
        log = Path(logs) / f"agent-{len(os.listdir(logs))}.log"
        with serve(["agent"], {**agent_env, **extra_env}, health_path="/healthz", log_path=log) as (
            base,
            proc,
        ):
            yield base, proc

    return start


@pytest.fixture(scope="session")
def agent_url(start_agent: AgentProcess) -> Iterator[str]:
    with start_agent() as (base, _proc):
        yield base


@pytest.fixture(scope="session")
def chat(agent_url: str) -> Chat:
    return Chat(agent_url)


@pytest.fixture()
def conversation(api: httpx.Client, tokens: dict[str, str]) -> Callable[[str], str]:
    """Create a conversation owned by a demo role; returns its id."""

    def create(role: str = "admin") -> str:
        response = api.post("/api/assistant/conversations", json={}, headers=bearer(tokens[role]))
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    return create
