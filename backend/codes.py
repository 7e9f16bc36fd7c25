"""The one enumeration of the error codes the backend writes.

Every `AppError`, every part error of a run's end, every code stored in a row (a workflow step's
error, an audit trail's failure) names a member here; the literal is spelled nowhere else in
backend/ (apart from the data its migrations carry). The agent reads some of these codes over
HTTP (agent/errors.py `BACKEND_CODES`); tests/agent/unit/test_codes.py checks that each one it
reads is a member, so a renamed code cannot silently break the agent's branch on it.
"""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    """Every `error.code` of the backend's envelope (and every code it stores in a row)."""

    # one per HTTP status of the AppError tree and of Starlette's own errors (backend/errors.py)
    BAD_REQUEST = "BAD_REQUEST"
    UNAUTHORIZED = "UNAUTHORIZED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    CONFLICT = "CONFLICT"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    INVALID_INPUT = "INVALID_INPUT"
    RATE_LIMITED = "RATE_LIMITED"
    UNAVAILABLE = "UNAVAILABLE"
    HTTP_ERROR = "HTTP_ERROR"
    INTERNAL = "INTERNAL"
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    CLIENT_CLOSED_REQUEST = "CLIENT_CLOSED_REQUEST"
    CANCELLED = "CANCELLED"
    # auth
    TOKEN_EXPIRED = "TOKEN_EXPIRED"
    INVALID_CREDENTIALS = "INVALID_CREDENTIALS"
    USERNAME_TAKEN = "USERNAME_TAKEN"
    SSO_FAILED = "SSO_FAILED"  # an OIDC state, token or login code refused
    NO_ROLE = "NO_ROLE"  # an organisation person in no group of AUTH__ROLE_MAP
    NAME_TAKEN = "NAME_TAKEN"  # an external MCP server of that name exists
    # conversations, their runs and their ends
    CONVERSATION_ARCHIVED = "CONVERSATION_ARCHIVED"
    CONVERSATION_BUSY = "CONVERSATION_BUSY"
    NO_ACTIVE_RUN = "NO_ACTIVE_RUN"
    NO_MESSAGE = "NO_MESSAGE"
    NOT_ASSISTANT = "NOT_ASSISTANT"
    FILE_TOO_LARGE = "FILE_TOO_LARGE"
    UNSUPPORTED_FILE = "UNSUPPORTED_FILE"
    # workflows
    UNKNOWN_WORKFLOW = "UNKNOWN_WORKFLOW"
    EXECUTION_CONFLICT = "EXECUTION_CONFLICT"
    REJECTED = "REJECTED"
    SUPERSEDED = "SUPERSEDED"
    # datasources
    SQL_REJECTED = "SQL_REJECTED"
    SQL_ERROR = "SQL_ERROR"
    SQL_TIMEOUT = "SQL_TIMEOUT"
    MIGRATION_FAILED = "MIGRATION_FAILED"
    INVALID_TABLE_NAME = "INVALID_TABLE_NAME"
    # dashboards
    VALIDATION_FAILED = "VALIDATION_FAILED"
    CHART_INVALID = "CHART_INVALID"
    BRANCH_EXISTS = "BRANCH_EXISTS"
    INVALID_DEFINITION = "INVALID_DEFINITION"
    NO_CHANGES = "NO_CHANGES"
    NOTHING_TO_MERGE = "NOTHING_TO_MERGE"
    NOT_FAST_FORWARD = "NOT_FAST_FORWARD"
    # Superset environments
    SUPERSET_UNAVAILABLE = "SUPERSET_UNAVAILABLE"
    SUPERSET_ERROR = "SUPERSET_ERROR"
    SUPERSET_NO_DATABASE = "SUPERSET_NO_DATABASE"
    SUPERSET_CHART_ERROR = "SUPERSET_CHART_ERROR"
    SUPERSET_CHART_MISSING = "SUPERSET_CHART_MISSING"
    SUPERSET_LOGIN_REQUIRED = "SUPERSET_LOGIN_REQUIRED"
    SUPERSET_FORBIDDEN = "SUPERSET_FORBIDDEN"
    # object storage
    INVALID_KEY = "INVALID_KEY"
    STORAGE_UNAVAILABLE = "STORAGE_UNAVAILABLE"
