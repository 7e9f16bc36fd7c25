"""Object keys as the API accepts them: relative, '/'-separated, and unable to leave the store."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote

from backend.codes import Code
from backend.errors import Unprocessable

MAX_KEY_BYTES = 1024  # S3's own limit
_DRIVE = re.compile(r"^[A-Za-z]:")
_ONLY_DOTS = re.compile(r"^[.\s]+$")


def _refuse(raw: str, reason: str) -> Unprocessable:
    shown = raw if len(raw) <= 200 else raw[:200] + "…"
    return Unprocessable(f"Invalid key: {reason}", code=Code.INVALID_KEY, details={"key": shown})


def _check(candidate: str, raw: str, *, allow_trailing_slash: bool) -> None:
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in candidate):
        raise _refuse(raw, "control characters are not allowed")
    if "\\" in candidate:
        raise _refuse(raw, "backslashes are not allowed; use '/'")
    if candidate.startswith("/") or _DRIVE.match(candidate):
        raise _refuse(raw, "absolute paths are not allowed")
    body = candidate[:-1] if allow_trailing_slash and candidate.endswith("/") else candidate
    for segment in body.split("/"):
        if not segment:
            raise _refuse(raw, "empty path segments are not allowed")
        if _ONLY_DOTS.match(segment):
            raise _refuse(raw, "'.' and '..' segments are not allowed")


def _validate(raw: str, *, allow_trailing_slash: bool) -> None:
    if len(raw.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
        raise _refuse(raw, f"longer than {MAX_KEY_BYTES} bytes")
    # The raw form, its compatibility-normalised form (fullwidth dots...) and the form after
    # one percent-decoding must all be safe. Decoding happens once only, never repeatedly.
    try:
        decoded = unquote(raw, errors="strict")
    except UnicodeDecodeError as exc:
        raise _refuse(raw, "percent-encoding that is not UTF-8") from exc
    for candidate in {raw, unicodedata.normalize("NFKC", raw), decoded}:
        _check(candidate, raw, allow_trailing_slash=allow_trailing_slash)


def normalise_key(raw: str) -> str:
    """The key of one object, unchanged when safe; otherwise 422 INVALID_KEY."""
    if not raw:
        raise _refuse(raw, "key is empty")
    _validate(raw, allow_trailing_slash=False)
    return raw


def normalise_prefix(raw: str | None) -> str:
    """A listing prefix: '' (everything) or the start of a safe key; may end with '/'."""
    if not raw:
        return ""
    _validate(raw, allow_trailing_slash=True)
    return raw
