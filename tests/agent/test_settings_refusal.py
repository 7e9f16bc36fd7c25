"""A refused production start, run as the real command: one clear line, and no secret value in
its output (the validation error once echoed LLM_API_KEY and JWT_SECRET)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.processes import ROOT, free_port

LLM_KEY = "sk-live-llm-key-DO-NOT-PRINT-0123456789"
SHORT_JWT = "short-jwt-DO-NOT-PRINT"
GOOD_JWT = "a-real-random-production-jwt-DO-NOT-PRINT-0123456789"
CLIENT = "agent-client-DO-NOT-PRINT"
SEED = "seed-admin-DO-NOT-PRINT"
SECRETS = (LLM_KEY, SHORT_JWT, GOOD_JWT, CLIENT, SEED)
OURS = ("ENV", "JWT_SECRET", "AGENT_CLIENT_SECRET", "LLM_API_KEY", "LLM_API_BASE", "CONF_FILE")


def start(command: str, **values: str) -> subprocess.CompletedProcess[str]:
    keep = {
        k: v
        for k, v in os.environ.items()
        if k.upper() not in OURS and not k.upper().startswith(("SEED_", "AGENT__", "SQL__"))
    }
    env = {
        **keep,
        "ENV": "production",
        # Never reached: a start that got this far would fail on it rather than start Postgres.
        "DATABASE_URL": "postgresql://nobody@127.0.0.1:9/none",
        "LLM_API_KEY": LLM_KEY,
        "SEED_ADMIN_PASSWORD": SEED,
        **values,
    }
    return subprocess.run(
        [sys.executable, "-m", "agent_chat.cli", command, "--port", str(free_port())],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("command", "values", "says"),
    [
        (
            "agent",
            {"JWT_SECRET": SHORT_JWT, "AGENT_CLIENT_SECRET": CLIENT},
            "refusing to start in production: JWT_SECRET must be set",
        ),
        (
            "agent",
            {"JWT_SECRET": GOOD_JWT},
            "refusing to start in production: AGENT_CLIENT_SECRET must be set",
        ),
        (
            "agent",
            {
                "JWT_SECRET": GOOD_JWT,
                "AGENT_CLIENT_SECRET": CLIENT,
                "AGENT__MAX_TOOL_CALLS": "lots",
            },
            "invalid configuration: AGENT__MAX_TOOL_CALLS: Input should be a valid integer",
        ),
        (
            "backend",
            {"JWT_SECRET": SHORT_JWT, "AGENT_CLIENT_SECRET": CLIENT},
            "refusing to start in production: JWT_SECRET must be set",
        ),
        (
            "backend",
            {"JWT_SECRET": GOOD_JWT, "AGENT_CLIENT_SECRET": CLIENT, "SQL__ROW_CAP": "many"},
            "invalid configuration: SQL__ROW_CAP: Input should be a valid integer",
        ),
    ],
    ids=[
        "agent-short-jwt",
        "agent-no-client-secret",
        "agent-bad-number",
        "backend-short-jwt",
        "backend-bad-number",
    ],
)
def test_a_refused_production_start_is_one_line_without_any_secret(command, values, says):
    done = start(command, **values)

    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    output = done.stdout + done.stderr
    for secret in SECRETS:
        assert secret not in output
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("agent-chat: ") and says in line, line
    assert "input_value" not in output and "Traceback" not in output
