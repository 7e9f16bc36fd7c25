"""A person as the organisation knows them, and the roles their groups map to."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from backend.identity.roles import RANK, Role

Source = Literal["local", "ldap", "oidc"]
LDAP_ISSUER = "ldap"  # the issuer column of every directory person (keyed by DN)


@dataclass(frozen=True)
class ExternalIdentity:
    """Who a directory or provider says signed in: the key (issuer, subject), a display name
    and the groups they are in."""

    source: Source
    issuer: str
    subject: str
    username: str
    groups: tuple[str, ...]


def mapped_roles(groups: Iterable[str], role_map: Mapping[str, str]) -> list[str]:
    """The highest role any of `groups` maps to, as a one-element list; [] when none maps."""
    ranked = [Role(role_map[g]) for g in groups if g in role_map]
    if not ranked:
        return []
    return [max(ranked, key=lambda role: RANK[role]).value]
