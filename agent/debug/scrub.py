"""Removing credentials from a debug record before it leaves the agent.

Headers are never recorded (the recorder sees messages and parameters, not HTTP), so this is
the second line: anything equal to a known secret, anything shaped like a JWT, a bearer
credential or an API key, and the value of any field named like a credential.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 8  # shorter "secrets" would redact ordinary words
MEMO_SIZE = 4096  # strings remembered per scrubber (one run's record)
JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}")
API_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")
CREDENTIAL_FIELDS = frozenset(
    {
        "api_key",
        "openai_api_key",
        "authorization",
        "x-on-behalf-of",
        "headers",
        "default_headers",
        "client_secret",
        "jwt_secret",
        "password",
        "access_token",
        "user_token",
        "service_token",
    }
)


class Scrubber:
    """Redacts `secrets` (exact values) and credential-shaped strings in JSON-like data."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        found = {s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}
        self.secrets = sorted(found, key=len, reverse=True)  # a longer one may contain another
        # A run's model calls repeat most of their strings (the system prompt, every tool's
        # schema, the history so far, every key): each is scanned once.
        self._memo: dict[str, str] = {}

    def text(self, value: str) -> str:
        done = self._memo.get(value)
        if done is None:
            done = self._text(value)
            if len(self._memo) < MEMO_SIZE:
                self._memo[value] = done
        return done

    def _text(self, value: str) -> str:
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        value = JWT.sub(REDACTED, value)
        value = BEARER.sub(f"Bearer {REDACTED}", value)
        return API_KEY.sub(REDACTED, value)

    def finds_nothing_in(self, dumped: str) -> bool:
        """True when `dumped`, the JSON of some data (`json.dumps`, ASCII), shows that scrubbing
        that data would change nothing: then the walk (a tenth of a turn's debug record cost)
        is skipped. JSON encodes a string character by character, so a secret inside a string
        leaves its own encoding in the dump; each shape's literal start (`eyJ`, `bearer`,
        `sk-`) and each credential field's quoted name likewise. What it finds may be a false
        alarm (`task-list`): then the data is walked as ever."""
        if any(_encoded(secret) in dumped for secret in self.secrets):
            return False
        if "eyJ" in dumped or "sk-" in dumped:
            return False
        lowered = dumped.lower()
        return "bearer" not in lowered and not any(f in lowered for f in _QUOTED_FIELDS)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                self.text(str(k)): REDACTED if str(k).lower() in CREDENTIAL_FIELDS else self(v)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        return value


_QUOTED_FIELDS = tuple(f'"{field}"' for field in CREDENTIAL_FIELDS)


def _encoded(text: str) -> str:
    return json.dumps(text)[1:-1]  # as the text reads inside a JSON string
