"""Secrets sealed at rest with a key from the environment (Fernet: AES-128-CBC + HMAC-SHA256),
for both processes: the backend seals an external MCP server's header values, the agent opens
them to call that server. Neither ever writes an opened value anywhere. The backend also seals
the answers it keeps under an Idempotency-Key (a token's creation answer holds its secret).

The key is `MCP_SECRET_KEY` (any string; a Fernet key is derived from it); unset, it is derived
from `JWT_SECRET`, which both processes already share and which production requires.
"""

from __future__ import annotations

import base64
import hashlib
import json

from cryptography.fernet import Fernet, InvalidToken


class SealError(Exception):
    """A sealed value that this key cannot open (another key, or tampered)."""


def _fernet(key_material: str) -> Fernet:
    digest = hashlib.sha256(b"agent-chat sealed v1\0" + key_material.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def seal(key_material: str, values: dict[str, str]) -> str:
    return _fernet(key_material).encrypt(json.dumps(values).encode()).decode()


def unseal(key_material: str, sealed: str) -> dict[str, str]:
    try:
        opened = json.loads(_fernet(key_material).decrypt(sealed.encode()))
    except (InvalidToken, ValueError) as exc:
        raise SealError("the sealed value cannot be opened with this key") from exc
    return {str(k): str(v) for k, v in opened.items()}


def seal_bytes(key_material: str, data: bytes) -> bytes:
    return _fernet(key_material).encrypt(data)


def unseal_bytes(key_material: str, sealed: bytes) -> bytes:
    try:
        return _fernet(key_material).decrypt(sealed)
    except InvalidToken as exc:
        raise SealError("the sealed value cannot be opened with this key") from exc
