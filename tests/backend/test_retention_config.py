"""The `retention:` settings: conf.yml's defaults, environment overrides, bad values refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from backend.config import Settings

NAMES = ("ENABLED", "KEEP_LATEST", "IDLE_TTL_S", "INTERVAL_S", "BATCH_SIZE", "VACUUM")


@pytest.fixture()
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("CONF_FILE", raising=False)
    for name in NAMES:
        monkeypatch.delenv(f"RETENTION__{name}", raising=False)
    return monkeypatch


def test_conf_yml_turns_retention_on_with_the_documented_defaults(env):
    retention = Settings().retention

    assert retention.enabled is True and retention.vacuum is True
    assert (retention.keep_latest, retention.idle_ttl_s) == (10, 30 * 86400)
    assert (retention.interval_s, retention.batch_size, retention.lock_timeout_s) == (300, 200, 2)


def test_environment_variables_override_each_retention_key(env):
    env.setenv("RETENTION__ENABLED", "false")
    env.setenv("RETENTION__KEEP_LATEST", "3")
    env.setenv("RETENTION__IDLE_TTL_S", "0")
    env.setenv("RETENTION__INTERVAL_S", "30")

    retention = Settings().retention

    assert retention.enabled is False and retention.keep_latest == 3
    assert retention.idle_ttl_s == 0 and retention.interval_s == 30
    assert retention.batch_size == 200  # the rest stays as conf.yml has it


@pytest.mark.parametrize(
    ("name", "value"), [("KEEP_LATEST", "0"), ("INTERVAL_S", "0"), ("IDLE_TTL_S", "-1")]
)
def test_a_retention_value_that_cannot_work_is_refused(env, name, value):
    env.setenv(f"RETENTION__{name}", value)

    with pytest.raises(ValidationError, match=name.lower()):
        Settings()
