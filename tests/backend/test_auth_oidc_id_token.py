"""A provider that puts the profile claims and groups in the ID token itself (as Keycloak's
group mapper does), with a groups claim of another name (`OIDC__GROUPS_CLAIM`)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import bearer
from tests.support import oidc_provider
from tests.support.processes import free_port, serve


@pytest.fixture(scope="module")
def stack(
    seeded: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, oidc_provider.Provider]]:
    if reason := oidc_provider.missing():
        pytest.skip(reason)
    folder: Path = tmp_path_factory.mktemp("oidc-id-token")
    port = free_port()
    env = {
        **seeded,
        "OIDC__ISSUER": f"http://127.0.0.1:{port}",
        "OIDC__CLIENT_ID": oidc_provider.CLIENT_ID,
        "OIDC__CLIENT_SECRET": oidc_provider.CLIENT_SECRET,
        "OIDC__GROUPS_CLAIM": "teams",
        "AUTH__ROLE_MAP": json.dumps({"bi-editors": "editor"}),
    }
    with (
        serve(["backend"], env, health_path="/readyz", log_path=folder / "backend.log") as (
            base,
            _,
        ),
        oidc_provider.running_provider(
            folder,
            port=port,
            redirect_uris=[f"{base}/api/auth/oidc/callback"],
            groups_in_id_token=True,
        ) as provider,
    ):
        yield base, provider


def test_groups_under_the_configured_claim_map_to_the_role(stack):
    base, provider = stack
    login, password = f"it_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex}"
    # `groups` says admin-like things the map does not know; `teams` is the configured claim
    provider.set_person(login, password, ["bi-admins"], teams=["bi-editors"], username=f"{login}.n")
    with httpx.Client(base_url=base, timeout=30) as browser:
        body = oidc_provider.sign_in(browser, login, password)
        me = browser.get("/api/auth/me", headers=bearer(body["access_token"])).json()
    assert (body["user"]["username"], body["user"]["roles"]) == (f"{login}.n", ["editor"])
    assert me["source"] == "oidc"
