"""Directory sign-in (ldap3): a search with the bind account, then a bind as the person.

Every value put into a filter is escaped (RFC 4515); a username holding a filter character is
refused before the directory is asked; an empty password never reaches a bind (a simple bind with
an empty password is an anonymous bind, which would "succeed").
"""

from __future__ import annotations

import asyncio
import logging
import re

from ldap3 import NONE, SUBTREE, Connection, Server
from ldap3.core.exceptions import LDAPException
from ldap3.utils.conv import escape_filter_chars

from backend.auth.identity import LDAP_ISSUER, ExternalIdentity
from backend.config import LdapSettings
from backend.errors import ServiceUnavailable

log = logging.getLogger("backend.auth.ldap")

# RFC 4515 filter characters, and anything below a space: never part of a username.
_FILTER_CHARS = re.compile(r"[*()\\\x00-\x1f]")


class LdapDirectory:
    """One configured directory; `authenticate` runs the blocking ldap3 calls on a thread."""

    def __init__(self, settings: LdapSettings) -> None:
        assert settings.url and settings.user_base
        self._settings = settings
        # ldap3 reads no path in the URL: `ldap://host:389/` is `ldap://host:389`
        url = settings.url.rstrip("/")
        self._server = Server(url, connect_timeout=settings.timeout_s, get_info=NONE)

    async def authenticate(self, username: str, password: str) -> ExternalIdentity | None:
        """The person, when the directory knows `username` and `password` binds as them;
        None for an unknown name, a wrong or empty password, or a filter character."""
        if not password or not username or _FILTER_CHARS.search(username):
            return None
        return await asyncio.to_thread(self._authenticate, username, password)

    def _connection(self, user: str | None, password: str | None) -> Connection:
        return Connection(
            self._server,
            user=user,
            password=password,
            receive_timeout=max(1, int(self._settings.timeout_s)),  # ldap3 packs an int
            read_only=True,
            raise_exceptions=False,
        )

    def _authenticate(self, username: str, password: str) -> ExternalIdentity | None:
        s = self._settings
        bind_password = s.bind_password.get_secret_value() if s.bind_password else None
        try:
            with self._connection(s.bind_dn, bind_password) as service:
                if not service.bound:
                    raise ServiceUnavailable("The directory refused the bind account")
                found = self._find(service, username)
                if found is None:
                    return None
                dn, name = found
                if not self._bind_as(dn, password):
                    return None
                groups = self._groups(service, dn)
        except LDAPException as exc:
            # the exception's class only: its text may hold the DN, never a password
            log.warning("directory unavailable: %s", type(exc).__name__)
            raise ServiceUnavailable("The directory cannot be reached") from exc
        return ExternalIdentity("ldap", LDAP_ISSUER, dn, name, tuple(groups))

    def _find(self, service: Connection, username: str) -> tuple[str, str] | None:
        """The one entry the user filter finds (DN, uid); None for none or several."""
        query = self._settings.user_filter.replace("{username}", escape_filter_chars(username))
        service.search(
            self._settings.user_base,
            query,
            search_scope=SUBTREE,
            attributes=["uid"],
            size_limit=2,
        )
        entries = [e for e in service.response or [] if e.get("type") == "searchResEntry"]
        if len(entries) != 1:
            return None
        uid = entries[0]["attributes"].get("uid") or [username]
        name = uid[0] if isinstance(uid, list) else str(uid)
        return str(entries[0]["dn"]), name

    def _bind_as(self, dn: str, password: str) -> bool:
        person = self._connection(dn, password)
        try:
            return bool(person.bind())
        finally:
            person.unbind()

    def _groups(self, service: Connection, dn: str) -> list[str]:
        """The `cn` of each groupOfNames under the group base whose `member` is `dn`."""
        if not self._settings.group_base:
            return []
        query = f"(&(objectClass=groupOfNames)(member={escape_filter_chars(dn)}))"
        service.search(self._settings.group_base, query, search_scope=SUBTREE, attributes=["cn"])
        names: list[str] = []
        for entry in service.response or []:
            if entry.get("type") == "searchResEntry":
                cn = entry["attributes"].get("cn") or []
                names.extend(cn if isinstance(cn, list) else [cn])
        return names
