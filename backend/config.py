"""Process settings: conf.yml defaults, overridden by environment variables."""

from __future__ import annotations

import os
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

ROOT = Path(__file__).resolve().parent.parent

# Development defaults: documented in the README, refused when ENV=production.
DEV_JWT_SECRET = "dev-only-jwt-secret-change-me-0123456789"
DEV_AGENT_CLIENT_SECRET = "dev-only-agent-secret"
DEV_SEED_PASSWORDS = {
    "admin": "admin-dev-pass",
    "editor": "editor-dev-pass",
    "viewer": "viewer-dev-pass",
}


class Env(StrEnum):
    development = "development"
    production = "production"


class JwtSettings(BaseModel):
    issuer: str = "agent-chat"
    audience: str = "agent-chat"
    user_ttl_s: int = 3600
    service_ttl_s: int = 300


class ApiSettings(BaseModel):
    max_page_size: int = 200
    default_page_size: int = 50
    max_title_length: int = 200
    max_message_length: int = 200_000


class DatasourceSettings(BaseModel):
    url: str
    description: str = ""


class SqlSettings(BaseModel):
    row_cap: int = 1000
    byte_cap: int = 2_000_000
    timeout_s: float = 5.0


class StorageSettings(BaseModel):
    url: str = "file://{data_dir}/files"
    max_read_bytes: int = 1_000_000
    # S3-compatible options (endpoint, region, key id/secret) come from the environment.
    s3_endpoint: str | None = None
    s3_region: str = "us-east-1"
    s3_access_key_id: SecretStr | None = None
    s3_secret_access_key: SecretStr | None = None


class LlmSettings(BaseModel):
    model: str = "gpt-4o-mini"
    max_input_tokens: int = 4000
    request_timeout_s: float = 60.0


class AgentSettings(BaseModel):
    max_model_calls: int = 12
    max_tool_calls: int = 20
    run_deadline_s: float = 120.0
    max_message_chars: int = 100_000
    max_file_bytes: int = 10 * 1024 * 1024
    max_files: int = 5
    # an external MCP server's call (or listing) longer than this is MCP_UNAVAILABLE
    mcp_timeout_s: float = Field(default=20.0, gt=0)


class WorkflowSettings(BaseModel):
    # `mode` is read by the agent; the backend loads the definitions from `dir`.
    mode: str = "dynamic"
    dir: Path = Path("workflows")


class RetentionSettings(BaseModel):
    """Checkpoint retention: the periodic job that bounds LangGraph's checkpoint tables."""

    enabled: bool = True
    keep_latest: int = Field(default=10, ge=1)  # checkpoints kept per thread (and namespace)
    idle_ttl_s: float = Field(default=30 * 86400, ge=0)  # clear a thread idle this long; 0 = never
    interval_s: float = Field(default=300.0, gt=0)  # between sweeps of one process
    vacuum: bool = True  # VACUUM the checkpoint tables after a sweep that deleted rows
    batch_size: int = Field(default=200, ge=1)  # threads read per query of a sweep
    lock_timeout_s: float = Field(
        default=2.0, gt=0
    )  # a thread whose lease row is locked longer is left


class SupersetInstanceSettings(BaseModel):
    """One Superset instance and the service account (an Admin there) the platform uses."""

    url: str
    username: str
    password: SecretStr  # environment only (SUPERSET__<ENV>__PASSWORD); never logged or returned
    provider: Literal["db", "ldap"] = "db"  # how the service account logs in


class SupersetSettings(BaseModel):
    """Real Apache Superset environments; unset staging keeps the built-in demo domain."""

    staging: SupersetInstanceSettings | None = None
    production: SupersetInstanceSettings | None = None
    sync_interval_s: float = Field(default=300.0, gt=0)
    timeout_s: float = Field(default=30.0, gt=0)  # one Superset request (an import included)
    # "person": every read a person causes goes to Superset under their own Superset session
    # (README, "Superset as the person"); "service": the service account, RBAC the platform's.
    identity: Literal["service", "person"] = "service"
    session_max_age_s: float = Field(default=43200.0, gt=0)  # a person's session after sign-in

    @property
    def enabled(self) -> bool:
        return self.staging is not None

    def instance(self, environment: str) -> SupersetInstanceSettings | None:
        found: SupersetInstanceSettings | None = getattr(self, environment, None)
        return found


RoleName = Literal["viewer", "editor", "admin"]


class OidcSettings(BaseModel):
    """An OpenID provider; the platform is a confidential client (README, "Sign in through your
    organisation"). Unset issuer, client id or secret: no OIDC sign-in."""

    issuer: str | None = None
    client_id: str | None = None
    client_secret: SecretStr | None = None  # environment only; never logged or returned
    name: str = "SSO"
    groups_claim: str = "groups"
    scope: str = "openid profile email"
    timeout_s: float = Field(default=10.0, gt=0)

    @property
    def enabled(self) -> bool:
        return bool(self.issuer and self.client_id and self.client_secret)


class LdapSettings(BaseModel):
    """A directory: a search with the bind account, then a bind as the person."""

    url: str | None = None
    bind_dn: str | None = None
    bind_password: SecretStr | None = None  # environment only; never logged or returned
    user_base: str | None = None
    user_filter: str = "(uid={username})"
    group_base: str | None = None
    timeout_s: float = Field(default=5.0, gt=0)

    @property
    def enabled(self) -> bool:
        return bool(self.url and self.user_base)


class AuthSettings(BaseModel):
    # group name -> role (AUTH__ROLE_MAP, JSON); a person gets the highest mapped role
    role_map: dict[str, RoleName] = Field(default_factory=dict)


class SchedulesSettings(BaseModel):
    """Schedules (CONTRACT.md "Schedules"): the procrastinate worker each backend runs."""

    enabled: bool = True  # this process runs a worker (firings, deliveries)
    min_interval_s: int = Field(default=300, ge=1)  # the smallest `every_s`
    misfire_grace_s: int = Field(default=3600, ge=0)  # a missed firing later than this: skipped
    tick_s: int = Field(default=10, ge=1, le=59)  # how often due schedules are looked for
    concurrency: int = Field(default=4, ge=1)  # firings and deliveries at once, per process
    run_deadline_s: int = Field(default=600, ge=10)  # one firing (a sweep's diagnoses included)
    agent_url: str = "http://127.0.0.1:7860"  # where firings reach the agent's chat entry
    webhook_secret: SecretStr | None = None  # SCHEDULES__WEBHOOK_SECRET: signs webhook bodies
    webhook_allow: str = ""  # SCHEDULES__WEBHOOK_ALLOW: comma-separated host names
    # a failed delivery's waits before its next attempts (3 attempts within 2 minutes)
    retry_delays_s: list[float] = Field(default_factory=lambda: [5.0, 30.0])
    delivery_timeout_s: float = Field(default=10.0, gt=0)

    @property
    def allowed_hosts(self) -> frozenset[str]:
        return frozenset(h.strip().lower() for h in self.webhook_allow.split(",") if h.strip())


class SmtpSettings(BaseModel):
    """Where schedule emails go (SMTP__*); the password only from the environment."""

    model_config = ConfigDict(populate_by_name=True)

    host: str | None = None
    port: int = 25
    sender: str = Field(default="agent-chat@localhost", alias="from")
    username: str | None = None
    password: SecretStr | None = None
    starttls: bool = False


def _conf_file() -> Path:
    return Path(os.environ.get("CONF_FILE", ROOT / "conf.yml"))


class Settings(BaseSettings):
    """All configuration of one process; build it once and pass it into factories."""

    # hide_input_in_errors: a refused configuration must not echo secrets into logs.
    model_config = SettingsConfigDict(
        env_nested_delimiter="__", extra="ignore", case_sensitive=False, hide_input_in_errors=True
    )

    env: Env = Env.development
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
    seed_admin_password: SecretStr | None = None
    seed_editor_password: SecretStr | None = None
    seed_viewer_password: SecretStr | None = None
    log_level: str = "INFO"
    # the site's address as people reach it; unset: built from the request (OIDC redirect URI)
    public_url: str | None = None

    jwt: JwtSettings = Field(default_factory=JwtSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    datasources: dict[str, DatasourceSettings] = Field(default_factory=dict)
    sql: SqlSettings = Field(default_factory=SqlSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    workflow: WorkflowSettings = Field(default_factory=WorkflowSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    superset: SupersetSettings = Field(default_factory=SupersetSettings)
    oidc: OidcSettings = Field(default_factory=OidcSettings)
    ldap: LdapSettings = Field(default_factory=LdapSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    schedules: SchedulesSettings = Field(default_factory=SchedulesSettings)
    smtp: SmtpSettings = Field(default_factory=SmtpSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        yaml_source = YamlConfigSettingsSource(settings_cls, yaml_file=_conf_file())
        return (init_settings, env_settings, yaml_source)

    @model_validator(mode="after")
    def _secrets_and_paths(self) -> Settings:
        if self.env is Env.production:
            self._refuse_dev_secrets()
        else:
            if self.jwt_secret is None:
                self.jwt_secret = SecretStr(DEV_JWT_SECRET)
            if self.agent_client_secret is None:
                self.agent_client_secret = SecretStr(DEV_AGENT_CLIENT_SECRET)
        if not self.data_dir.is_absolute():
            self.data_dir = (Path.cwd() / self.data_dir).resolve()
        for ds in self.datasources.values():
            ds.url = ds.url.replace("{data_dir}", str(self.data_dir))
        self.storage.url = self.storage.url.replace("{data_dir}", str(self.data_dir))
        return self

    def _refuse_dev_secrets(self) -> None:
        problems: list[str] = []
        secret = self.jwt_secret.get_secret_value() if self.jwt_secret else ""
        if not secret or secret == DEV_JWT_SECRET or len(secret) < 32:
            problems.append("JWT_SECRET must be set to a random value of at least 32 characters")
        client = self.agent_client_secret.get_secret_value() if self.agent_client_secret else ""
        if not client or client == DEV_AGENT_CLIENT_SECRET:
            problems.append("AGENT_CLIENT_SECRET must be set")
        for role, default in DEV_SEED_PASSWORDS.items():
            value: SecretStr | None = getattr(self, f"seed_{role}_password")
            if value is not None and value.get_secret_value() in ("", default):
                problems.append(f"SEED_{role.upper()}_PASSWORD must not be the development default")
        if problems:
            raise ValueError("refusing to start in production: " + "; ".join(problems))

    def seed_password(self, role: str) -> str | None:
        """The demo user's password: env value, or the documented default in development."""
        value: SecretStr | None = getattr(self, f"seed_{role}_password")
        if value is not None:
            return value.get_secret_value()
        return DEV_SEED_PASSWORDS[role] if self.env is Env.development else None

    @property
    def workflow_folder(self) -> Path:
        """The workflows folder; a relative path is taken from the project root."""
        folder = self.workflow.dir
        return folder if folder.is_absolute() else ROOT / folder

    @property
    def jwt_key(self) -> str:
        assert self.jwt_secret is not None
        return self.jwt_secret.get_secret_value()

    @property
    def mcp_key(self) -> str:
        """The key material that seals external MCP servers' header values."""
        secret = self.mcp_secret_key or self.jwt_secret
        assert secret is not None
        return secret.get_secret_value()


@lru_cache
def get_settings(**overrides: Any) -> Settings:
    return Settings(**overrides)
