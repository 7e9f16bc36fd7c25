"""Roles and their order: viewer < editor < admin."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    viewer = "viewer"
    editor = "editor"
    admin = "admin"


RANK = {Role.viewer: 1, Role.editor: 2, Role.admin: 3}


def highest_rank(roles: list[str]) -> int:
    return max((RANK[Role(r)] for r in roles if r in Role.__members__), default=0)


def satisfies(roles: list[str], required: Role) -> bool:
    """True when any of `roles` is at least `required` (admin implies editor implies viewer)."""
    return highest_rank(roles) >= RANK[required]
