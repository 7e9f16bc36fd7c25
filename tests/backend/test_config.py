"""Settings: conf.yml < environment, development defaults, and what production refuses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend.config import DEV_AGENT_CLIENT_SECRET, DEV_JWT_SECRET, Env, Settings
from tests.support.processes import ROOT, free_port

GOOD_SECRET = "a-real-random-production-secret-0123456789"
SECRET_VARS = (
    "ENV",
    "JWT_SECRET",
    "AGENT_CLIENT_SECRET",
    "SEED_ADMIN_PASSWORD",
    "SEED_EDITOR_PASSWORD",
    "SEED_VIEWER_PASSWORD",
    "CONF_FILE",
    "API__MAX_PAGE_SIZE",
)


@pytest.fixture()
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A clean slate for the variables these tests set."""
    for name in SECRET_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def production(env: pytest.MonkeyPatch, **values: str) -> Settings:
    env.setenv("ENV", "production")
    defaults = {"JWT_SECRET": GOOD_SECRET, "AGENT_CLIENT_SECRET": "a-real-agent-secret"}
    for name, value in {**defaults, **values}.items():
        env.setenv(name, value)
    return Settings()


def test_development_falls_back_to_the_documented_defaults(env):
    settings = Settings()
    assert settings.env is Env.development
    assert settings.jwt_key == DEV_JWT_SECRET
    assert settings.agent_client_secret is not None
    assert settings.agent_client_secret.get_secret_value() == DEV_AGENT_CLIENT_SECRET
    assert settings.seed_password("admin") == "admin-dev-pass"


def test_production_with_real_secrets_starts_and_has_no_default_seed_passwords(env):
    settings = production(env)
    assert settings.jwt_key == GOOD_SECRET
    assert settings.seed_password("admin") is None
    assert production(env, SEED_VIEWER_PASSWORD="chosen-pass").seed_password("viewer") == (
        "chosen-pass"
    )


@pytest.mark.parametrize(
    ("values", "unset", "message"),
    [
        ({}, "JWT_SECRET", "JWT_SECRET must be set"),
        ({"JWT_SECRET": DEV_JWT_SECRET}, None, "JWT_SECRET must be set"),
        ({"JWT_SECRET": "x" * 31}, None, "at least 32 characters"),
        ({}, "AGENT_CLIENT_SECRET", "AGENT_CLIENT_SECRET must be set"),
        ({"AGENT_CLIENT_SECRET": DEV_AGENT_CLIENT_SECRET}, None, "AGENT_CLIENT_SECRET must be set"),
        ({"SEED_ADMIN_PASSWORD": "admin-dev-pass"}, None, "SEED_ADMIN_PASSWORD must not be"),
        ({"SEED_EDITOR_PASSWORD": "editor-dev-pass"}, None, "SEED_EDITOR_PASSWORD must not be"),
        ({"SEED_VIEWER_PASSWORD": "viewer-dev-pass"}, None, "SEED_VIEWER_PASSWORD must not be"),
        ({"SEED_VIEWER_PASSWORD": ""}, None, "SEED_VIEWER_PASSWORD must not be"),
    ],
    ids=[
        "no_jwt",
        "dev_jwt",
        "short_jwt",
        "no_agent",
        "dev_agent",
        "dev_admin",
        "dev_editor",
        "dev_viewer",
        "empty_seed",
    ],
)
def test_production_refuses_development_secrets(env, values, unset, message):
    env.setenv("ENV", "production")
    defaults = {"JWT_SECRET": GOOD_SECRET, "AGENT_CLIENT_SECRET": "a-real-agent-secret"}
    for name, value in {**defaults, **values}.items():
        if name != unset:
            env.setenv(name, value)
    with pytest.raises(ValueError, match="refusing to start in production") as caught:
        Settings()
    assert message in str(caught.value)


def test_a_refusal_does_not_echo_the_secret_values(env):
    with pytest.raises(ValueError) as caught:
        production(env, JWT_SECRET="short-but-real-secret", SEED_ADMIN_PASSWORD="admin-dev-pass")
    assert "short-but-real-secret" not in str(caught.value)
    assert "a-real-agent-secret" not in str(caught.value)


def test_an_unknown_env_is_refused(env):
    env.setenv("ENV", "staging")
    with pytest.raises(ValueError, match="env"):
        Settings()


def test_environment_overrides_conf_yml_including_nested_keys(env, tmp_path: Path):
    conf = tmp_path / "conf.yml"
    conf.write_text("api:\n  max_page_size: 7\n  default_page_size: 3\njwt:\n  issuer: from-file\n")
    env.setenv("CONF_FILE", str(conf))
    from_file = Settings()
    assert (from_file.api.max_page_size, from_file.api.default_page_size) == (7, 3)
    assert from_file.jwt.issuer == "from-file"
    env.setenv("API__MAX_PAGE_SIZE", "9")
    env.setenv("JWT__ISSUER", "from-env")
    overridden = Settings()
    assert (overridden.api.max_page_size, overridden.api.default_page_size) == (9, 3)
    assert overridden.jwt.issuer == "from-env"


def test_the_project_conf_yml_holds_the_documented_defaults(env):
    settings = Settings()
    assert settings.api.max_page_size == 200
    assert (settings.jwt.issuer, settings.jwt.audience) == ("agent-chat", "agent-chat")


def test_the_backend_command_refuses_to_start_in_production_without_secrets(database_url):
    keep = {k: v for k, v in os.environ.items() if k.upper() not in SECRET_VARS}
    env = {
        **keep,
        "ENV": "production",
        "DATABASE_URL": database_url,
        "JWT_SECRET": "short-but-real-secret",
        "SEED_ADMIN_PASSWORD": "admin-dev-pass",
    }
    done = subprocess.run(
        [sys.executable, "-m", "agent_chat.cli", "backend", "--port", str(free_port())],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "refusing to start in production" in done.stderr
    for problem in ("JWT_SECRET", "AGENT_CLIENT_SECRET", "SEED_ADMIN_PASSWORD"):
        assert problem in done.stderr
    assert "short-but-real-secret" not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
