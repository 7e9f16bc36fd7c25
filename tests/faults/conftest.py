"""One private stack for the fault suite (tests/faults/support.py): Postgres cluster, backend,
scripted LLM and a primary agent process, started once and shared by every fault module.

Nothing here touches the machine's shared Postgres or the processes of the other suites: a
fault may restart the database, restart the backend or kill an agent."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from backend.migrate import upgrade
from tests.agent.support import Chat
from tests.conftest import AGENT_CLIENT_SECRET, PASSWORDS, TEST_JWT_SECRET, bearer, login
from tests.fakes.llm_server import FakeLLM
from tests.faults.support import PrivatePostgres, Service, cannot_run_postgres, postgres_bin
from tests.support.processes import run_cli

HERE = Path(__file__).parent
# What the agents of the suite run with: a short model timeout (the hang test waits for two of
# them), a 2 s lease (a killed agent frees its conversations quickly) and small budgets.
AGENT_ENV = {
    "LLM__REQUEST_TIMEOUT_S": "5",  # a loaded CI machine must not time out a healthy answer
    "AGENT__LEASE_TTL_S": "2",
    "AGENT__MAX_MODEL_CALLS": "6",
    "AGENT__MAX_TOOL_CALLS": "8",
    "AGENT__RUN_DEADLINE_S": "60",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The first fault test also starts the whole stack: give it room."""
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.timeout(600))  # a loaded machine starts slowly


@dataclass
class Stack:
    """The running stack and the handles a fault test needs."""

    postgres: PrivatePostgres
    database_url: str
    warehouse_url: str
    backend: Service
    agent: Service
    llm: FakeLLM
    agent_env: dict[str, str]
    logs: Path
    api: httpx.Client
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def chat(self) -> Chat:
        return Chat(self.agent.url)

    def new_agent(self) -> Service:
        """One more agent process (not yet started: `spawn()` + `ready()`, or `start()`)."""
        n = len(list(self.logs.glob("agent-*.log")))
        return Service(
            ["agent"], self.agent_env, health_path="/healthz", log_path=self.logs / f"agent-{n}.log"
        )

    def conversation(self, role: str = "admin") -> str:
        response = self.api.post(
            "/api/assistant/conversations", json={}, headers=bearer(self.tokens[role])
        )
        assert response.status_code == 201, response.text
        return str(response.json()["id"])


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    if reason := cannot_run_postgres():
        pytest.skip(reason)
    bin_dir = postgres_bin()
    assert bin_dir is not None
    postgres = PrivatePostgres(bin_dir).start()
    llm = FakeLLM().start()
    logs = tmp_path_factory.mktemp("fault-logs")
    started: list[Service] = []
    try:
        database_url = postgres.create_database("agentchat")
        warehouse_url = postgres.create_database("warehouse")
        upgrade(database_url)
        env = {
            "ENV": "development",
            "DATABASE_URL": database_url,
            "DATASOURCES__WAREHOUSE__URL": warehouse_url,
            "SQL__TIMEOUT_S": "30",  # longer than any fault: a query ends because we end it
            "DATA_DIR": str(tmp_path_factory.mktemp("fault-data")),
            "JWT_SECRET": TEST_JWT_SECRET,
            "AGENT_CLIENT_ID": "agent-chat",
            "AGENT_CLIENT_SECRET": AGENT_CLIENT_SECRET,
            "SEED_ADMIN_PASSWORD": PASSWORDS["admin"],
            "SEED_EDITOR_PASSWORD": PASSWORDS["editor"],
            "SEED_VIEWER_PASSWORD": PASSWORDS["viewer"],
            "LOG_LEVEL": "WARNING",
        }
        # The backend, the agent and the seed start side by side (the agent's URL of the
        # backend is known before it answers): the stack is ready in the time of the slowest.
        backend = Service(["backend"], env, health_path="/readyz", log_path=logs / "backend.log")
        agent_env = {
            **env,
            **AGENT_ENV,
            "BACKEND_URL": backend.url,
            "LLM_API_BASE": llm.url,
            "LLM_API_KEY": "fake-llm-key",
        }
        agent = Service(
            ["agent"], agent_env, health_path="/healthz", log_path=logs / "agent-primary.log"
        )
        started += [backend.spawn(), agent.spawn()]
        run_cli(["seed"], {**os.environ, **env})
        backend.ready()
        agent.ready()
        with httpx.Client(base_url=backend.url, timeout=30) as api:
            tokens = {name: login(api, name, pw) for name, pw in PASSWORDS.items()}
            yield Stack(
                postgres=postgres,
                database_url=database_url,
                warehouse_url=warehouse_url,
                backend=backend,
                agent=agent,
                llm=llm,
                agent_env=agent_env,
                logs=logs,
                api=api,
                tokens=tokens,
            )
    finally:
        for service in reversed(started):
            service.stop()
        llm.stop()
        postgres.stop()


@pytest.fixture(autouse=True)
def _fresh_script(stack: Stack) -> None:
    stack.llm.reset()
