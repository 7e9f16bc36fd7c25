"""The npm `oidc-provider` on Node 20 (tests/support/oidc/provider.js) for the OIDC tests."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.processes import ROOT, stop, wait_http

FOLDER = ROOT / "tests" / "support" / "oidc"
CLIENT_ID = "agent-chat-web"
CLIENT_SECRET = "oidc-client-test-secret-0123456789"


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
