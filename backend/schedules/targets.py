"""Where a schedule may deliver: webhook URLs on allowed hosts only; email addresses."""

from __future__ import annotations

from urllib.parse import urlsplit


class TargetError(ValueError):
    """A delivery target refused; the message says why."""


def check_webhook(url: str, allowed: frozenset[str]) -> str:
    """The URL if its scheme is http(s) and its host one of `allowed`, exactly; TargetError
    otherwise. Userinfo is refused outright: `http://allowed@evil/` names the host `evil`,
    and a person reading it may think otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a malformed port
    except ValueError as exc:
        raise TargetError("The webhook URL cannot be parsed") from exc
    del port
    if parts.scheme not in ("http", "https"):
        raise TargetError("A webhook URL must be http or https")
    if "@" in parts.netloc or parts.username is not None or parts.password is not None:
        raise TargetError("A webhook URL must not carry user information")
    host = (parts.hostname or "").lower().rstrip(".")
    if not host or host not in allowed:
        raise TargetError("The webhook host is not in SCHEDULES__WEBHOOK_ALLOW")
    if any(ch in url for ch in ("\\", "\r", "\n", " ", "\t")):
        raise TargetError("The webhook URL has characters a URL cannot have")
    return url
