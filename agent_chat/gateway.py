"""The nginx gateway on one machine: render nginx/default.conf.template with local addresses and
run nginx in the foreground under a private prefix. `agent-chat up --agents N` and the test
suite (tests/e2e) use it; docker-compose fills the same template with the nginx image's envsubst
(docker/nginx-upstreams.envsh writes the `server` lines there, as `server_lines` does here)."""

from __future__ import annotations

import ipaddress
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "nginx" / "default.conf.template"
PLACEHOLDER = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")
MIME_TYPES = Path("/etc/nginx/mime.types")
# A replica that fails once (refused, or timed out) is left out for 5 s, then tried again.
SERVER_PARAMS = "max_fails=1 fail_timeout=5s"
# The twin groups tried when nginx believes every replica is down never leave one out.
RETRY_PARAMS = "max_fails=0"
# The `server` lines are derived from these lists of host:port.
DERIVED = {
    "BACKEND_SERVERS": "BACKEND_UPSTREAM",
    "AGENT_SERVERS": "AGENT_UPSTREAM",
    "BACKEND_RETRY_SERVERS": "BACKEND_UPSTREAM",
    "AGENT_RETRY_SERVERS": "AGENT_UPSTREAM",
}

MAIN_CONF = """\
worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections {connections}; }}
http {{
    include {mime_types};
    default_type application/octet-stream;
    # an OIDC callback's query (the authorization code, the state) never reaches the log
    map $request_uri $agentchat_uri {{
        ~^(/api/auth/oidc/[^?]*)[?] "$1?[redacted]";
        default $request_uri;
    }}
    log_format upstream '$request_method $agentchat_uri $status $upstream_addr $request_time';
    access_log {prefix}/access.log upstream;
    sendfile on;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    include {prefix}/agent-chat.conf;
}}
"""


class GatewayError(RuntimeError):
    """nginx is missing or refused the rendered configuration."""


def placeholders(template: str) -> set[str]:
    """The ${NAME} placeholders of a template (nginx's own $variables are not among them)."""
    return set(PLACEHOLDER.findall(template))


def render(template: str, values: Mapping[str, str]) -> str:
    """Fill every ${NAME}; a placeholder without a value is an error, as it would be in prod."""
    missing = placeholders(template) - set(values)
    if missing:
        raise KeyError(f"no value for {sorted(missing)}")
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def addresses(upstream: str | Sequence[str]) -> list[str]:
    """host:port entries of an upstream list ("a:1,b:2", "a:1 b:2", or a sequence)."""
    items = upstream.replace(",", " ").split() if isinstance(upstream, str) else list(upstream)
    if not items:
        raise ValueError("an upstream needs at least one host:port")
    return items


def server_lines(upstream: str | Sequence[str], params: str = SERVER_PARAMS) -> str:
    """The `server` directives of one upstream group, on one line.

    A host name (not an IP address) is re-resolved while nginx runs (`resolve`, nginx >=
    1.27.3), so every replica behind a compose service name is a server, as they come and go.
    """
    lines = []
    for address in addresses(upstream):
        host = address.rsplit(":", 1)[0]
        line = f"server {address} {params}"
        if not _is_ip(host):
            line += " resolve"
        lines.append(line + ";")
    return " ".join(lines)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def values(
    *,
    listen: str,
    backend: str | Sequence[str],
    agent: str | Sequence[str],
    static_root: Path | str,
    resolver: str = "127.0.0.1",
) -> dict[str, str]:
    """Every placeholder's value for local processes."""
    return {
        "LISTEN": listen,
        "BACKEND_SERVERS": server_lines(backend),
        "AGENT_SERVERS": server_lines(agent),
        "BACKEND_RETRY_SERVERS": server_lines(backend, RETRY_PARAMS),
        "AGENT_RETRY_SERVERS": server_lines(agent, RETRY_PARAMS),
        "RESOLVER": resolver,
        "STATIC_ROOT": str(static_root),
    }


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).exists()), None
    )


def write_config(
    prefix: Path, filled: Mapping[str, str], *, workers: int = 1, connections: int = 1024
) -> Path:
    """Write the main config and the rendered server config under `prefix`; return the main."""
    prefix.mkdir(parents=True, exist_ok=True)
    (prefix / "agent-chat.conf").write_text(render(TEMPLATE.read_text(), filled))
    main = prefix / "nginx.conf"
    main.write_text(
        MAIN_CONF.format(
            prefix=prefix, mime_types=MIME_TYPES, workers=workers, connections=connections
        )
    )
    return main


def start(
    prefix: Path, filled: Mapping[str, str], *, workers: int = 1, connections: int = 1024
) -> subprocess.Popen[bytes]:
    """Check the rendered configuration with `nginx -t`, then run nginx in the foreground."""
    binary = nginx_binary()
    if binary is None:
        raise GatewayError("nginx is needed for several replicas (apt-get install nginx)")
    main = write_config(prefix, filled, workers=workers, connections=connections)
    command = [binary, "-p", str(prefix), "-c", str(main), "-e", str(prefix / "error.log")]
    checked = subprocess.run([*command, "-t", "-q"], capture_output=True, text=True, check=False)
    if checked.returncode != 0:
        raise GatewayError(f"nginx refused {main}: {checked.stderr.strip()}")
    log = (prefix / "stdout.log").open("ab")
    try:
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    finally:
        log.close()
