"""OpenID Connect as a confidential client: discovery, authorization code with PKCE (S256),
and the ID token's validation with the provider's keys.

The protocol is Authlib's (authorization URL, PKCE, token request) and joserfc's (JWS, JWK):
nothing here parses or checks a signature by hand. What this module adds is the policy: the
discovered issuer must be the configured one, the ID token must name this client as its
audience, carry the login's nonce and be signed by a key the provider publishes, with an
asymmetric algorithm the provider announces.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.httpx_client import AsyncOAuth2Client
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry

from backend.auth.identity import ExternalIdentity
from backend.codes import Code
from backend.config import OidcSettings
from backend.errors import Unauthorized

log = logging.getLogger("backend.auth.oidc")

# Keys from a JWKS are public keys: an HMAC ("HS*") or "none" token is never accepted.
_ASYMMETRIC = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
_METADATA_TTL_S = 3600.0
_LEEWAY_S = 60


def failed(reason: str) -> Unauthorized:
    """The one refusal of every OIDC failure; the reason goes to the log and the audit row."""
    log.info("OIDC sign-in refused: %s", reason)
    error = Unauthorized("Sign-in through the organisation failed", code=Code.SSO_FAILED)
    error.details = {"reason": reason}
    return error


class OidcProvider:
    """One configured provider: its discovery document and keys are cached on this object."""

    def __init__(self, settings: OidcSettings) -> None:
        assert settings.issuer and settings.client_id and settings.client_secret
        self.settings = settings
        self.issuer = settings.issuer.rstrip("/")
        self._metadata: dict[str, Any] | None = None
        self._metadata_at = 0.0
        self._keys: KeySet | None = None

    def _client(self, redirect_uri: str) -> AsyncOAuth2Client:
        s = self.settings
        assert s.client_secret is not None
        return AsyncOAuth2Client(
            client_id=s.client_id,
            client_secret=s.client_secret.get_secret_value(),
            scope=s.scope,
            redirect_uri=redirect_uri,
            code_challenge_method="S256",
            token_endpoint_auth_method="client_secret_basic",  # noqa: S106 (a method's name)
            timeout=s.timeout_s,
        )

    async def metadata(self) -> dict[str, Any]:
        """The discovery document; its `issuer` must be the configured issuer."""
        if self._metadata is None or time.monotonic() - self._metadata_at > _METADATA_TTL_S:
            url = f"{self.issuer}/.well-known/openid-configuration"
            async with httpx.AsyncClient(timeout=self.settings.timeout_s) as http:
                response = await http.get(url)
                response.raise_for_status()
                found = response.json()
            if found.get("issuer", "").rstrip("/") != self.issuer:
                raise failed("discovery_issuer_mismatch")
            self._metadata, self._metadata_at = found, time.monotonic()
        return self._metadata

    async def authorization_url(
        self, *, redirect_uri: str, state: str, nonce: str, code_verifier: str
    ) -> str:
        """Where to send the browser: the provider's login with PKCE S256, state and nonce."""
        meta = await self.metadata()
        async with self._client(redirect_uri) as client:
            url, _ = client.create_authorization_url(
                meta["authorization_endpoint"],
                state=state,
                code_verifier=code_verifier,
                nonce=nonce,
            )
        return str(url)

    async def identity(
        self, *, code: str, redirect_uri: str, code_verifier: str, nonce: str
    ) -> ExternalIdentity:
        """Exchange the code, validate the ID token, and read the person and their groups."""
        meta = await self.metadata()
        async with self._client(redirect_uri) as client:
            try:
                token = await client.fetch_token(
                    meta["token_endpoint"],
                    grant_type="authorization_code",
                    code=code,
                    code_verifier=code_verifier,
                )
            except OAuthError as exc:
                raise failed(f"token_endpoint:{exc.error}") from exc
            claims = await self._id_token(token, nonce)
            wanted = (self.settings.groups_claim, "preferred_username")
            if any(k not in claims for k in wanted) and meta.get("userinfo_endpoint"):
                # a provider may keep profile claims and groups for userinfo (OIDC Core 5.4)
                info = await self._userinfo(client, meta["userinfo_endpoint"], claims["sub"])
                claims = {**info, **claims}
        name = claims.get("preferred_username") or claims.get("email") or claims["sub"]
        groups = _group_names(claims.get(self.settings.groups_claim))
        return ExternalIdentity("oidc", self.issuer, str(claims["sub"]), str(name)[:64], groups)

    async def _id_token(self, token: dict[str, Any], nonce: str) -> dict[str, Any]:
        raw = token.get("id_token")
        if not isinstance(raw, str):
            raise failed("no_id_token")
        meta = await self.metadata()
        announced = meta.get("id_token_signing_alg_values_supported") or ["RS256"]
        registry = JWSRegistry(algorithms=[a for a in announced if a in _ASYMMETRIC])
        try:
            try:
                decoded = jwt.decode(raw, await self._key_set(), registry=registry)
            except InvalidKeyIdError:  # the provider may have rotated its keys
                decoded = jwt.decode(raw, await self._key_set(refresh=True), registry=registry)
            options = {
                "iss": {"essential": True, "value": meta["issuer"]},
                "aud": {"essential": True, "value": self.settings.client_id},
                "exp": {"essential": True},
                "nonce": {"essential": True, "value": nonce},
            }
            params = {"nonce": nonce, "client_id": self.settings.client_id}
            if token.get("access_token"):
                params["access_token"] = token["access_token"]
            claims = CodeIDToken(decoded.claims, decoded.header, options, params)
            claims.validate(leeway=_LEEWAY_S)
        except (JoseError, ValueError) as exc:
            raise failed(f"id_token:{type(exc).__name__}") from exc
        return dict(claims)

    async def _key_set(self, *, refresh: bool = False) -> KeySet:
        if self._keys is None or refresh:
            meta = await self.metadata()
            async with httpx.AsyncClient(timeout=self.settings.timeout_s) as http:
                response = await http.get(meta["jwks_uri"])
                response.raise_for_status()
                self._keys = KeySet.import_key_set(response.json())
        return self._keys

    async def _userinfo(self, client: AsyncOAuth2Client, url: str, sub: str) -> dict[str, Any]:
        response = await client.get(url)
        response.raise_for_status()
        info = response.json()
        if not isinstance(info, dict) or info.get("sub") != sub:
            raise failed("userinfo_sub_mismatch")  # OIDC Core 5.3.2: the ID token's subject
        return info


def _group_names(groups: Any) -> tuple[str, ...]:
    if isinstance(groups, str):
        return (groups,)
    if isinstance(groups, list):
        return tuple(str(g) for g in groups)
    return ()
