"""Schemathesis over the backend's OpenAPI, signed in as admin: every response must be what the
schema promises (status, body), bad input must be refused, no 5xx, and an operation that takes
a token must refuse a request without one. Fixed seed, bounded examples: a minute or two.

It runs against a backend of its own on a fresh database, since as admin it deploys, merges,
runs migrations and archives whatever it finds; the suite's shared data stays as it was."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from backend.migrate import upgrade
from tests.conftest import PASSWORDS
from tests.support import db
from tests.support.processes import run_cli, serve

CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "ignored_auth",
)
SEED = "20261201"
MAX_EXAMPLES = "6"


@pytest.fixture(scope="module")
def own_backend(
    backend_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    admin = db.server_url()
    url = db.create_database(admin)
    data = tmp_path_factory.mktemp("fuzz-data")
    env = {**backend_env, "DATABASE_URL": url, "DATA_DIR": str(data)}
    try:
        upgrade(url)
        run_cli(["seed"], {**os.environ, **env})
        log = tmp_path_factory.mktemp("fuzz-logs") / "backend.log"
        with serve(["backend"], env, health_path="/readyz", log_path=log) as (base, _proc):
            yield base
    finally:
        db.drop_database(admin, url)


# Every operation, fuzzed: minutes on a loaded two-core machine (the subprocess has 600 s).
@pytest.mark.timeout(620)
def test_the_backend_keeps_every_promise_of_its_openapi(own_backend: str, tmp_path: Path):
    login = httpx.post(
        own_backend + "/api/auth/login",
        json={"username": "admin", "password": PASSWORDS["admin"]},
        timeout=30,
    )
    token = login.json()["access_token"]
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "run",
        own_backend + "/openapi.json",
        "--checks",
        ",".join(CHECKS),
        "--header",
        f"Authorization: Bearer {token}",
        "--seed",
        SEED,
        "--max-examples",
        MAX_EXAMPLES,
        "--phases",
        "examples,coverage,fuzzing",
        "--workers",
        "1",
        "--request-timeout",
        "20",
        "--generation-database",
        "none",
        "--continue-on-failure",
        "--no-color",
    ]
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    report = done.stdout[-12000:] + done.stderr[-3000:]
    assert done.returncode == 0, report
    tested = re.search(r"Tested: (\d+)", done.stdout)
    assert tested and int(tested[1]) >= 50, report  # every operation, none skipped
