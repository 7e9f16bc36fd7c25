"""Where a username and password are checked: the local accounts, then the directory.

Each source answers one of three things: the name is not its own (`None`: ask the next one),
the person is refused (`Refused`), or who they proved to be (a local `User` or an
`ExternalIdentity`). A local account of a name is checked locally only, so a directory entry of
the same name can never take it over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.auth.identity import ExternalIdentity, Source
from backend.auth.ldap import LdapDirectory
from backend.identity import tokens
from backend.identity.models import User


@dataclass(frozen=True)
class Refused:
    source: Source
    user: User | None = None  # the local account refused, when there is one


Verdict = User | ExternalIdentity | Refused | None


class PasswordSource(Protocol):
    source: Source

    async def authenticate(
        self, *, session: AsyncSession, username: str, password: str
    ) -> Verdict: ...


class LocalAccounts:
    """The platform's own accounts (argon2 hashes)."""

    source: Source = "local"

    def __init__(self, *, last: bool) -> None:
        self._last = last  # with no source after it, an unknown name is refused here

    async def authenticate(self, *, session: AsyncSession, username: str, password: str) -> Verdict:
        user = await session.scalar(
            select(User).where(User.username == username, User.source == "local")
        )
        await session.commit()  # hand the connection back to the pool while argon2 runs
        if user is None and not self._last:
            return None
        # without an account, a dummy hash is checked: an unknown name costs a wrong password's time
        ok = await tokens.verify_secret(user.password_hash if user else None, password)
        if user is None or not ok or not password or not user.is_active:
            return Refused("local", user)
        return user


class DirectoryAccounts:
    """The LDAP directory: every name no local account holds."""

    source: Source = "ldap"

    def __init__(self, directory: LdapDirectory) -> None:
        self._directory = directory

    async def authenticate(self, *, session: AsyncSession, username: str, password: str) -> Verdict:
        found = await self._directory.authenticate(username, password)
        return found if found is not None else Refused("ldap")


def password_sources(directory: LdapDirectory | None) -> list[PasswordSource]:
    """The sources in the order they are asked."""
    if directory is None:
        return [LocalAccounts(last=True)]
    return [LocalAccounts(last=False), DirectoryAccounts(directory)]
