"""The schedules' stack: an agent process (scripted LLM), backends running the schedules'
worker (procrastinate) that call it, an SMTP server and a webhook receiver."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import _fresh_script, agent_env, agent_url, fake_llm, start_agent
from tests.schedules.receivers import SmtpServer, WebhookReceiver
from tests.support.processes import serve

__all__ = ["_fresh_script", "agent_env", "agent_url", "fake_llm", "start_agent"]
WEBHOOK_SECRET = "test-webhook-secret-0123456789"


@pytest.fixture(scope="session")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def hooks() -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver().start()
    yield receiver
    receiver.stop()


@pytest.fixture(scope="session")
def schedules_env(seeded: dict[str, str], agent_url: str, smtp: SmtpServer) -> dict[str, str]:
    return {
        **seeded,
        "SCHEDULES__ENABLED": "true",
        "SCHEDULES__AGENT_URL": agent_url,
        "SCHEDULES__TICK_S": "1",
        "SCHEDULES__MIN_INTERVAL_S": "2",
        "SCHEDULES__RUN_DEADLINE_S": "60",
        "SCHEDULES__WEBHOOK_ALLOW": "127.0.0.1,hooks.example.org",
        "SCHEDULES__WEBHOOK_SECRET": WEBHOOK_SECRET,
        "SCHEDULES__RETRY_DELAYS_S": json.dumps([2, 4]),
        "SMTP__HOST": "127.0.0.1",
        "SMTP__PORT": str(smtp.port),
        "SMTP__FROM": "bi-bot@example.org",
    }


StartBackend = Callable[..., AbstractContextManager[tuple[str, Any]]]


@pytest.fixture(scope="session")
def start_backend(
    schedules_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> StartBackend:
    """A context manager running one more backend with the schedules' worker."""
    logs = tmp_path_factory.mktemp("schedule-backends")
    count = iter(range(1000))

    @contextmanager
    def start(**extra: str) -> Iterator[tuple[str, Any]]:
        log = Path(logs) / f"backend-{next(count)}.log"
        env = {**schedules_env, **extra}
        with serve(["backend"], env, health_path="/readyz", log_path=log) as found:
            yield found

    return start


@pytest.fixture(scope="session")
def sched_url(start_backend: StartBackend) -> Iterator[str]:
    with start_backend() as (base, _proc):
        yield base


@pytest.fixture(scope="session")
def sapi(sched_url: str) -> Iterator[Any]:
    import httpx

    with httpx.Client(base_url=sched_url, timeout=30) as client:
        yield client
