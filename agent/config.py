"""Agent process settings: the same conf.yml and environment as the backend, read on their own
(agent/ never imports backend/)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

ROOT = Path(__file__).resolve().parent.parent
DEV_JWT_SECRET = "dev-only-jwt-secret-change-me-0123456789"
DEV_AGENT_CLIENT_SECRET = "dev-only-agent-secret"


class JwtSettings(BaseModel):
    issuer: str = "agent-chat"
    audience: str = "agent-chat"


class LlmSettings(BaseModel):
    model: str = "gpt-4o-mini"
    max_input_tokens: int = 4000
    request_timeout_s: float = 60.0
    supports_images: bool = False


class AgentSettings(BaseModel):
    max_model_calls: int = 12
    max_tool_calls: int = 20
    run_deadline_s: float = 120.0
    max_message_chars: int = 100_000
    max_file_bytes: int = 10 * 1024 * 1024
    max_files: int = 5
    # an external MCP server's call (or listing) longer than this is MCP_UNAVAILABLE
    mcp_timeout_s: float = Field(default=20.0, gt=0)
    # how long this process keeps the backend's list of external MCP servers before asking again
    mcp_refresh_s: float = Field(default=10.0, ge=0)
    # past this many characters of external tool definitions in one model call, the model is
    # offered `find_tools` instead and binds only the tools it found (agent/external/search.py)
    external_tools_budget_chars: int = Field(default=12_000, ge=0)
    # the provider's limit on a tool's description (OpenAI: 1024); the rest of a longer one
    # reaches the model in the tool's parameters' description
    tool_description_chars: int = Field(default=1024, ge=200)
    # extracted file text per message; capped at half of llm.max_input_tokens
    max_attachment_tokens: int = 2000
    # selected files and tables per message; within half of llm.max_input_tokens, less what
    # the message's attachments use
    max_resource_tokens: int = 2000
    lease_ttl_s: float = 10.0
    confirm_wait_s: float = 2.0
    # where other replicas reach this process's live runs (agent/runs/internal.py); `agent-chat
    # agent` sets it from its host and port when unset
    advertise_url: str | None = None
    # runs of this process starting at once (agent/admission.py; 0: no limit), and how
    # long one start may keep its slot before it is let go
    start_slots: int = Field(default=4, ge=0)
    start_hold_s: float = Field(default=0.5, gt=0)
    # updates of a thread's messages between two full snapshots in its checkpoints (the rest
    # are stored as deltas: agent/perf/delta_state.py)
    snapshot_every: int = Field(default=400, ge=1)


class DiagnosisSettings(BaseModel):
    """Budgets and bounds of one diagnosis run (`options.mode = "diagnose"`)."""

    max_model_calls: int = Field(default=8, ge=1, le=50)
    max_tokens: int = Field(default=60_000, ge=1)  # from the usage the model reports
    deadline_s: float = Field(default=90.0, gt=0)
    max_query_bytes: int = Field(default=4000, ge=1)  # UTF-8; longer is refused, never cut
    max_previous_bytes: int = Field(default=24_000, ge=0)  # the previous diagnosis, frozen
    max_draft_bytes: int = Field(default=16_000, ge=256)  # the model's final JSON
    saturation_threshold: int = Field(default=2, ge=1)  # NO_GAIN in a row -> STOP_REQUIRED
    max_protocol_violations: int = Field(default=3, ge=1)  # -> STOP_REQUIRED


class WorkflowSettings(BaseModel):
    mode: Literal["dynamic", "none", "yaml", "diagnose"] = "dynamic"


class Settings(BaseSettings):
    # hide_input_in_errors: a refused configuration must not echo secrets (LLM_API_KEY, ...).
    model_config = SettingsConfigDict(
        env_nested_delimiter="__", extra="ignore", hide_input_in_errors=True
    )

    env: Literal["development", "production"] = "development"
    data_dir: Path = Path(".data")
    database_url: str | None = None
    jwt_secret: SecretStr | None = None
    # seals external MCP servers' header values (agent_chat/sealed.py); unset: from JWT_SECRET
    mcp_secret_key: SecretStr | None = None
    agent_client_id: str = "agent-chat"
    agent_client_secret: SecretStr | None = None
    backend_url: str = "http://127.0.0.1:8000"
    llm_api_base: str | None = None
    llm_api_key: SecretStr | None = None
    llm_model: str | None = None
    log_level: str = "INFO"

    jwt: JwtSettings = Field(default_factory=JwtSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    workflow: WorkflowSettings = Field(default_factory=WorkflowSettings)
    diagnosis: DiagnosisSettings = Field(default_factory=DiagnosisSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        conf = Path(os.environ.get("CONF_FILE", ROOT / "conf.yml"))
        return (init_settings, env_settings, YamlConfigSettingsSource(settings_cls, yaml_file=conf))

    @model_validator(mode="after")
    def _secrets(self) -> Settings:
        if self.env == "production":
            secret = self.jwt_secret.get_secret_value() if self.jwt_secret else ""
            client = self.agent_client_secret.get_secret_value() if self.agent_client_secret else ""
            if not secret or secret == DEV_JWT_SECRET or len(secret) < 32:
                raise ValueError(
                    "refusing to start in production: JWT_SECRET must be set to a random value"
                    " of at least 32 characters"
                )
            if not client or client == DEV_AGENT_CLIENT_SECRET:
                raise ValueError("refusing to start in production: AGENT_CLIENT_SECRET must be set")
        else:
            self.jwt_secret = self.jwt_secret or SecretStr(DEV_JWT_SECRET)
            self.agent_client_secret = self.agent_client_secret or SecretStr(
                DEV_AGENT_CLIENT_SECRET
            )
        return self

    @property
    def model_name(self) -> str:
        return self.llm_model or self.llm.model

    @property
    def mcp_key(self) -> str:
        """The key material that seals external MCP servers' header values."""
        secret = self.mcp_secret_key or self.jwt_secret
        assert secret is not None
        return secret.get_secret_value()


@lru_cache
def get_settings(**overrides: Any) -> Settings:
    return Settings(**overrides)
