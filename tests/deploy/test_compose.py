"""docker-compose.yml and the Dockerfiles agree with the real commands, ports, settings and
gateway template (there is no Docker engine here, so this is checked by reading them)."""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent.config import Settings as AgentSettings
from agent_chat.cli import build_parser
from agent_chat.gateway import DERIVED, TEMPLATE, placeholders, server_lines
from backend.config import Settings as BackendSettings
from backend.main import create_app

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
# The stack itself; the `observability` profile's services are checked on their own below.
SERVICES: dict[str, Any] = {
    name: service for name, service in COMPOSE["services"].items() if "profiles" not in service
}
OBSERVABILITY: dict[str, Any] = {
    name: service
    for name, service in COMPOSE["services"].items()
    if "observability" in service.get("profiles", [])
}
# Read by common/observability.py (and the OpenTelemetry SDK), not by the Settings, and
# Gradio's upload folder (one for every agent replica).
OPERATIONS_ENV = {"LOG_FORMAT", "OTEL_EXPORTER_OTLP_ENDPOINT", "GRADIO_TEMP_DIR"}
ALL_INTERFACES = "0.0.0.0"  # noqa: S104 (inside a container, as the services bind)
REQUIRED_SECRET = re.compile(r"^\$\{[A-Z_]+:\?[^}]+\}$")


def _command(service: str) -> list[str]:
    """The agent-chat invocation a service runs (the last one of a `sh -c` chain)."""
    command = SERVICES[service]["command"]
    if command[:2] == ["sh", "-c"]:
        return shlex.split(command[2].split("&&")[-1].replace("exec ", ""))
    return list(command)


def _cli_defaults(subcommand: str) -> dict[str, Any]:
    return vars(build_parser().parse_args([subcommand]))


def _parsed(service: str) -> dict[str, Any]:
    argv = _command(service)
    assert argv[0] == "agent-chat", argv
    return vars(build_parser().parse_args(argv[1:]))


def _env(service: str) -> dict[str, str]:
    return {k: str(v) for k, v in SERVICES[service].get("environment", {}).items()}


def _dockerfile(service: str) -> Path:
    build = SERVICES[service]["build"]
    return ROOT / build["context"] / build["dockerfile"]


def test_the_stack_is_postgres_a_migrate_job_backend_agent_and_nginx():
    assert set(SERVICES) == {"postgres", "migrate", "backend", "agent", "nginx"}
    for name, service in SERVICES.items():
        if name == "migrate":  # a job that runs once and exits
            assert service["restart"] == "no"
            continue
        assert service.get("restart") in ("unless-stopped", "always"), name
        assert service["healthcheck"]["test"], name


def test_services_start_in_order_of_health():
    depends = {name: s.get("depends_on", {}) for name, s in SERVICES.items()}
    assert depends["migrate"] == {"postgres": {"condition": "service_healthy"}}
    assert depends["backend"] == {"migrate": {"condition": "service_completed_successfully"}}
    assert depends["agent"] == {"backend": {"condition": "service_healthy"}}
    assert depends["nginx"] == {
        "backend": {"condition": "service_healthy"},
        "agent": {"condition": "service_healthy"},
    }


def test_migrations_and_demo_data_run_once_before_any_backend_replica_serves():
    script = SERVICES["migrate"]["command"][2]
    steps = [step.strip() for step in script.split("&&")]
    assert steps == ["agent-chat migrate", "agent-chat seed"]
    for step in steps:  # each is a real subcommand
        build_parser().parse_args(shlex.split(step)[1:])
    assert "migrate" not in " ".join(SERVICES["backend"]["command"])
    for seed in ("SEED_ADMIN_PASSWORD", "SEED_EDITOR_PASSWORD", "SEED_VIEWER_PASSWORD"):
        assert REQUIRED_SECRET.match(_env("migrate")[seed])
    backend = _parsed("backend")
    assert backend["command"] == "backend"
    assert backend["port"] == _cli_defaults("backend")["port"] == 8000
    assert backend["host"] == ALL_INTERFACES


def test_the_agent_runs_the_agent_subcommand_on_the_cli_default_port():
    agent = _parsed("agent")
    assert agent["command"] == "agent"
    assert agent["port"] == _cli_defaults("agent")["port"] == 7860
    assert agent["host"] == ALL_INTERFACES
    assert _env("agent")["BACKEND_URL"] == f"http://backend:{_parsed('backend')['port']}"


def test_health_checks_call_routes_the_services_really_serve():
    backend_check = " ".join(SERVICES["backend"]["healthcheck"]["test"])
    url = re.search(r"http://127\.0\.0\.1:(\d+)(/\w+)", backend_check)
    assert url is not None and int(url.group(1)) == _parsed("backend")["port"]
    settings = BackendSettings(env="development", database_url="postgresql://x@127.0.0.1:1/x")
    routes = {getattr(r, "path", "") for r in create_app(settings).routes}
    assert url.group(2) in routes

    agent_check = " ".join(SERVICES["agent"]["healthcheck"]["test"])
    url = re.search(r"http://127\.0\.0\.1:(\d+)(/\w+)", agent_check)
    assert url is not None and int(url.group(1)) == _parsed("agent")["port"]
    assert url.group(2) in _agent_get_routes()


def _agent_get_routes() -> set[str]:
    """Paths of `@app.get(...)` routes in agent/app.py (importing it would load Gradio)."""
    tree = ast.parse((ROOT / "agent" / "app.py").read_text())
    paths = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            paths.add(str(node.args[0].value))
    return paths


def test_nginx_gets_every_template_value_and_points_at_the_real_services():
    env = _env("nginx")
    derived = set(DERIVED)
    assert placeholders(TEMPLATE.read_text()) <= set(env) | derived
    assert {DERIVED[name] for name in derived} <= set(env)
    assert env["BACKEND_UPSTREAM"] == f"backend:{_parsed('backend')['port']}"
    assert env["AGENT_UPSTREAM"] == f"agent:{_parsed('agent')['port']}"
    assert env["RESOLVER"] == "127.0.0.11"  # Docker's embedded DNS
    published = [p.rsplit(":", 1)[1] for p in SERVICES["nginx"]["ports"]]
    assert published == [env["LISTEN"]]
    dockerfile = _dockerfile("nginx").read_text()
    assert "COPY nginx/default.conf.template /etc/nginx/templates/" in dockerfile
    assert f"STATIC_ROOT={env['STATIC_ROOT']}" in dockerfile
    assert f"COPY --from=client /frontend/dist {env['STATIC_ROOT']}" in dockerfile


@pytest.mark.parametrize("service", ["agent", "backend"])
def test_the_replicated_services_can_scale(service: str):
    """`docker compose up --scale agent=3`: no fixed host port or container name, and nginx
    takes the service name as a re-resolved server of an upstream with a shared zone."""
    assert "ports" not in SERVICES[service]
    assert "container_name" not in SERVICES[service]
    upstream = _env("nginx")[f"{service.upper()}_UPSTREAM"]
    assert server_lines(upstream) == f"server {upstream} max_fails=1 fail_timeout=5s resolve;"
    template = TEMPLATE.read_text()
    group = template.split(f"upstream agentchat_{service} {{", 1)[1].split("\n}", 1)[0]
    assert f"zone agentchat_{service} " in group
    assert f"${{{service.upper()}_SERVERS}}" in group
    assert "resolver ${RESOLVER}" in template


def test_the_agent_upstream_keeps_a_login_on_one_replica_and_skips_dead_ones():
    template = TEMPLATE.read_text()
    group = template.split("upstream agentchat_agent {", 1)[1].split("\n}", 1)[0]
    assert "hash $http_authorization consistent;" in group
    location = template.split("location /api/agent/gradio/ {", 1)[1].split("\n    }", 1)[0]
    # passed on when the replica died before answering, POSTs included (Gradio's job state
    # died with it); the body is buffered so that it can be sent again
    assert "proxy_next_upstream error timeout non_idempotent;" in location
    assert "proxy_buffering off;" in location
    assert "proxy_request_buffering off;" not in location
    assert "error_page 502 = @agent_retry;" in location


def test_the_nginx_image_re_resolves_upstream_names():
    """`server ... resolve` is open-source nginx from 1.27.3."""
    dockerfile = _dockerfile("nginx").read_text()
    image = re.search(r"^FROM nginx:(\d+)\.(\d+)(?:\.(\d+))?-alpine$", dockerfile, flags=re.M)
    assert image is not None
    version = tuple(int(part or 0) for part in image.groups())
    assert version >= (1, 27, 3)
    copied = re.search(r"COPY --chmod=755 (\S+) /docker-entrypoint\.d/(\S+)$", dockerfile, re.M)
    assert copied is not None
    assert (ROOT / copied.group(1)).exists()
    # Sourced (.envsh) by the image's entrypoint, before 20-envsubst-on-templates.sh.
    assert copied.group(2).endswith(".envsh") and copied.group(2) < "20-envsubst"


SH = shutil.which("sh")


@pytest.mark.skipif(SH is None, reason="needs a POSIX sh")
@pytest.mark.parametrize(
    "upstream", ["agent:7860", "backend:8000", "10.0.0.7:7860,10.0.0.8:7860", "a:1 10.1.2.3:2"]
)
def test_the_image_writes_the_same_server_lines_as_the_local_gateway(upstream: str):
    script = ROOT / "docker" / "nginx-upstreams.envsh"
    env = {"PATH": os.environ["PATH"], "BACKEND_UPSTREAM": upstream, "AGENT_UPSTREAM": upstream}
    shell = (
        '. "$0" && printf "%s\\n%s\\n%s\\n%s" "$BACKEND_SERVERS" "$AGENT_SERVERS" '
        '"$BACKEND_RETRY_SERVERS" "$AGENT_RETRY_SERVERS"'
    )
    result = subprocess.run(
        [str(SH), "-c", shell, str(script)], env=env, capture_output=True, text=True, check=True
    )
    assert (
        result.stdout.splitlines()
        == [server_lines(upstream)] * 2 + [server_lines(upstream, "max_fails=0")] * 2
    )


@pytest.mark.parametrize("service", ["migrate", "backend", "agent"])
def test_python_service_variables_are_settings_the_processes_read(service: str):
    fields = set(BackendSettings.model_fields) | set(AgentSettings.model_fields)
    for name in _env(service):
        assert name.lower() in fields or name.startswith("SEED_") or name in OPERATIONS_ENV, name
    for seed in ("SEED_ADMIN_PASSWORD", "SEED_EDITOR_PASSWORD", "SEED_VIEWER_PASSWORD"):
        assert seed.lower() in BackendSettings.model_fields


@pytest.mark.parametrize("service", ["migrate", "backend", "agent"])
def test_secrets_come_from_the_environment_and_are_required(service: str):
    env = _env(service)
    assert env["ENV"] == "production"
    for secret in ("JWT_SECRET", "AGENT_CLIENT_SECRET"):
        assert REQUIRED_SECRET.match(env[secret]), env[secret]
    assert ":?" in env["DATABASE_URL"]
    assert "@postgres:5432/" in env["DATABASE_URL"]


def test_the_python_image_holds_every_package_and_the_migrations():
    dockerfile = _dockerfile("backend").read_text()
    assert _dockerfile("agent") == _dockerfile("backend")
    pyproject = (ROOT / "pyproject.toml").read_text()
    packages = re.search(r"packages = \[([^\]]+)\]", pyproject)
    assert packages is not None
    for package in re.findall(r'"(\w+)"', packages.group(1)):
        assert f"COPY {package} ./{package}" in dockerfile
    for source in re.findall(r"^COPY (?!--)(.+) \S+$", dockerfile, flags=re.M):
        for path in source.split():
            assert (ROOT / path).exists(), path
    assert "uv sync --frozen --no-dev" in dockerfile


def test_the_observability_profile_adds_prometheus_grafana_and_jaeger():
    assert set(OBSERVABILITY) == {"prometheus", "grafana", "jaeger"}
    assert set(COMPOSE["services"]) == set(SERVICES) | set(OBSERVABILITY)
    for name, service in OBSERVABILITY.items():
        assert service["profiles"] == ["observability"], name
        assert service["healthcheck"]["test"], name
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            assert (ROOT / source).exists(), source
    assert (
        "${GRAFANA_ADMIN_PASSWORD:?"
        in OBSERVABILITY["grafana"]["environment"]["GF_SECURITY_ADMIN_PASSWORD"]
    )


def test_prometheus_scrapes_each_process_metrics_on_its_cli_port():
    config = yaml.safe_load((ROOT / "ops" / "prometheus.yml").read_text())
    jobs = {job["job_name"]: job["dns_sd_configs"][0] for job in config["scrape_configs"]}
    assert jobs["agent-chat-backend"]["names"] == ["backend"]
    assert jobs["agent-chat-backend"]["port"] == _parsed("backend")["port"]
    assert jobs["agent-chat-agent"]["names"] == ["agent"]
    assert jobs["agent-chat-agent"]["port"] == _parsed("agent")["port"]
    assert "/metrics" in {
        getattr(route, "path", "")
        for route in create_app(
            BackendSettings(env="development", database_url="postgresql://x@127.0.0.1:1/x")
        ).routes
    }


def test_the_grafana_dashboard_plots_the_contract_metrics():
    import json

    dashboard = json.loads((ROOT / "ops" / "grafana" / "agent-chat.json").read_text())
    exprs = " ".join(t["expr"] for p in dashboard["panels"] for t in p["targets"])
    for metric in (
        "agent_first_token_seconds_bucket",
        "agent_turn_seconds_bucket",
        "agent_runs_total",
        'agent_tool_calls_total{status="error"}',
        "agent_llm_tokens_total",
    ):
        assert metric in exprs, metric
    uids = {p["datasource"]["uid"] for p in dashboard["panels"]}
    provisioned = yaml.safe_load(
        (ROOT / "ops/grafana/provisioning/datasources/prometheus.yml").read_text()
    )
    assert uids == {d["uid"] for d in provisioned["datasources"]}


def test_python_services_pass_the_operations_settings_through():
    for service in ("backend", "agent"):
        env = _env(service)
        assert env["LOG_FORMAT"] == "${LOG_FORMAT:-text}"
        assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "${OTEL_EXPORTER_OTLP_ENDPOINT:-}"
