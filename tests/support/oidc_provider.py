"""The npm `oidc-provider` on Node 20 (tests/support/oidc/provider.js) for the OIDC tests."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

from tests.support.processes import ROOT, stop, wait_http

FOLDER = ROOT / "tests" / "support" / "oidc"
CLIENT_ID = "agent-chat-web"
CLIENT_SECRET = "oidc-client-test-secret-0123456789"
START = "/api/auth/oidc/login"
EXCHANGE = "/api/auth/oidc/exchange"


def missing() -> str | None:
    """Why the OIDC tests cannot run here, or None."""
    return None if shutil.which("node") and shutil.which("npm") else "Node.js 20 with npm"


def install() -> None:
    """`npm ci` into tests/support/oidc once (the Makefile's `oidc-deps` does the same)."""
    if not (FOLDER / "node_modules" / ".package-lock.json").exists():
        npm = shutil.which("npm") or "npm"
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=FOLDER, check=True)


@dataclass
class Provider:
    issuer: str
    people_file: Path
    people: dict[str, dict[str, Any]] = field(default_factory=dict)

    def set_person(self, login: str, password: str, groups: list[str], **extra: Any) -> None:
        """Add or change a person (read again by the provider at each sign-in)."""
        self.people[login] = {"password": password, "groups": groups, **extra}
        self.people_file.write_text(json.dumps(self.people))

    def mischief(self, mode: str) -> None:
        """Make the token endpoint hand out a forged ID token (`off` to stop)."""
        httpx.post(f"{self.issuer}/__mischief", params={"mode": mode}).raise_for_status()


@contextmanager
def running_provider(
    folder: Path, *, port: int, redirect_uris: list[str], groups_in_id_token: bool = False
) -> Iterator[Provider]:
    install()
    people = folder / "people.json"
    people.write_text("{}")
    issuer = f"http://127.0.0.1:{port}"
    node = shutil.which("node") or "/usr/bin/node"
    env = {
        "PATH": str(Path(node).parent),
        "PORT": str(port),
        "CLIENT_ID": CLIENT_ID,
        "CLIENT_SECRET": CLIENT_SECRET,
        "REDIRECT_URIS": ",".join(redirect_uris),
        "PEOPLE_FILE": str(people),
        "GROUPS_IN_ID_TOKEN": "1" if groups_in_id_token else "0",
    }
    with (folder / "oidc-provider.log").open("ab") as log:
        proc = subprocess.Popen(
            [node, str(FOLDER / "provider.js")],
            cwd=FOLDER,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_http(f"{issuer}/.well-known/openid-configuration", proc=proc, timeout=60)
        yield Provider(issuer, people)
    finally:
        stop(proc)


def sign_in_at_provider(
    browser: httpx.Client, login: str, password: str, next_path: str | None = "/chat"
) -> str:
    """Start the login, sign in on the provider's own page; the callback URL it sends the
    browser to (not yet followed)."""
    params = {"next": next_path} if next_path is not None else {}
    response = browser.get(START, params=params)
    assert response.status_code == 302, response.text
    url = response.headers["location"]
    for _ in range(10):
        response = browser.get(url)
        if response.status_code == 200 and "<form" in response.text:
            action = re.search(r'action="([^"]+)"', response.text)
            assert action is not None
            url = urljoin(url, action.group(1))
            response = browser.post(url, data={"login": login, "password": password})
        if "/api/auth/oidc/callback" in response.headers.get("location", ""):
            return str(response.headers["location"])
        assert response.status_code in (302, 303), response.text
        url = urljoin(url, response.headers["location"])
    raise AssertionError("the provider never sent the browser back")


def fragment(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).fragment).items()}


def sign_in(browser: httpx.Client, login: str, password: str, next_path: str = "/chat") -> dict:
    callback = browser.get(sign_in_at_provider(browser, login, password, next_path))
    assert callback.status_code == 302, callback.text
    code = fragment(callback.headers["location"])["login_code"]
    exchanged = browser.post(EXCHANGE, json={"login_code": code})
    assert exchanged.status_code == 200, exchanged.text
    return dict(exchanged.json())
