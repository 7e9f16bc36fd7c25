"""Keep the OIDC callback's query (the authorization code and the state) out of the access log.

uvicorn's access line holds the full path with its query; for the OIDC routes the query is cut
off, so no code or state of a sign-in reaches a log.
"""

from __future__ import annotations

import logging

_PREFIX = "/api/auth/oidc/"


class _CutOidcQuery(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        # uvicorn.access: (client_addr, method, full_path, http_version, status_code)
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            path = args[2]
            if path.startswith(_PREFIX) and "?" in path:
                record.args = (*args[:2], path.split("?", 1)[0] + "?[redacted]", *args[3:])
        return True


_FILTER = _CutOidcQuery()


def install() -> None:
    """Add the filter to uvicorn's access logger (once; idempotent)."""
    logger = logging.getLogger("uvicorn.access")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
