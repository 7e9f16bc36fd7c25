"""The one list of codes that can reach the browser, for both processes.

The agent's stream (`error`, `notice`, a tool card's or a workflow step's `error`, a diagnosis's
`stop_reason`) and the backend's error envelope (`{"error": {"code", ...}}`, a workflow step's
or an audit row's stored code) name members of `Code`; the literal is spelled nowhere else
(tests/agent/unit/test_codes.py scans both packages). A backend code reaches a tool card too:
the agent passes a backend refusal's code on (agent/tools/calls.py `safe_backend_error`).

`Code`'s section comments are read by frontend/scripts/gen_codes.py: each section becomes one
list of frontend/src/lib/codes.ts (`make api-types`). `BACKEND` is the backend's view (the codes
it writes); agent/errors.py and backend/codes.py re-export `Code` for their own modules.
"""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    """Every code of the stream and of the backend's envelope, each once."""

    # errors that end a turn (CONTRACT.md's list first)
    UNAUTHORIZED = "UNAUTHORIZED"
    TOKEN_EXPIRED = "TOKEN_EXPIRED"
    NOT_FOUND = "NOT_FOUND"
    CONVERSATION_BUSY = "CONVERSATION_BUSY"
    CONVERSATION_ARCHIVED = "CONVERSATION_ARCHIVED"
    CHECKPOINT_EXPIRED = "CHECKPOINT_EXPIRED"
    NO_PENDING_CONFIRMATION = "NO_PENDING_CONFIRMATION"
    LLM_ERROR = "LLM_ERROR"
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"
    INVALID_INPUT = "INVALID_INPUT"
    UNSUPPORTED_FILE = "UNSUPPORTED_FILE"
    FILE_TOO_LARGE = "FILE_TOO_LARGE"
    BACKEND_UNAVAILABLE = "BACKEND_UNAVAILABLE"
    RUN_INTERRUPTED = "RUN_INTERRUPTED"
    USAGE_LIMIT = "USAGE_LIMIT"
    WORKFLOW_FAILED = "WORKFLOW_FAILED"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    # notices: the turn goes on
    TRUNCATED = "TRUNCATED"
    NO_WORKFLOW_MATCHED = "NO_WORKFLOW_MATCHED"
    NO_ACTIVE_RUN = "NO_ACTIVE_RUN"
    WORKFLOW_STOPPED = "WORKFLOW_STOPPED"
    ATTACHMENT_TRUNCATED = "ATTACHMENT_TRUNCATED"
    IMAGE_NOT_SUPPORTED = "IMAGE_NOT_SUPPORTED"
    NO_TEXT = "NO_TEXT"
    RESOURCE_TRUNCATED = "RESOURCE_TRUNCATED"
    RESOURCE_REFUSED = "RESOURCE_REFUSED"
    # a tool card's or a workflow step's error (the agent's own)
    FORBIDDEN = "FORBIDDEN"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
    INVALID_TABLE_REF = "INVALID_TABLE_REF"
    TOOL_FAILED = "TOOL_FAILED"
    TOOL_ERROR = "TOOL_ERROR"
    TOOLS_DISABLED = "TOOLS_DISABLED"
    TEMPLATE_ERROR = "TEMPLATE_ERROR"
    REJECTED = "REJECTED"
    CANCELLED = "CANCELLED"
    NOT_EXECUTED = "NOT_EXECUTED"
    BACKEND_ERROR = "BACKEND_ERROR"
    BACKEND_TIMEOUT = "BACKEND_TIMEOUT"
    SUPERSET_UNAVAILABLE = "SUPERSET_UNAVAILABLE"  # the backend's Superset did not answer
    SUPERSET_LOGIN_REQUIRED = "SUPERSET_LOGIN_REQUIRED"  # person mode: no Superset session
    SUPERSET_FORBIDDEN = "SUPERSET_FORBIDDEN"  # person mode: their own Superset refused
    CONFIRMATION_REQUIRED = "CONFIRMATION_REQUIRED"
    MCP_UNAVAILABLE = "MCP_UNAVAILABLE"
    MCP_ERROR = "MCP_ERROR"
    # a diagnosis's stop reason or failure (the `diagnosis` message's `stop_reason`, `error`)
    SATURATED = "SATURATED"
    DEADLINE = "DEADLINE"
    INVALID_DRAFT = "INVALID_DRAFT"
    # the backend's: one per HTTP status of its AppError tree and of Starlette's own errors
    BAD_REQUEST = "BAD_REQUEST"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    CONFLICT = "CONFLICT"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    RATE_LIMITED = "RATE_LIMITED"
    UNAVAILABLE = "UNAVAILABLE"
    HTTP_ERROR = "HTTP_ERROR"
    INTERNAL = "INTERNAL"
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    CLIENT_CLOSED_REQUEST = "CLIENT_CLOSED_REQUEST"
    # the backend's: sign-in and accounts
    INVALID_CREDENTIALS = "INVALID_CREDENTIALS"
    USERNAME_TAKEN = "USERNAME_TAKEN"
    SSO_FAILED = "SSO_FAILED"  # an OIDC state, token or login code refused
    NO_ROLE = "NO_ROLE"  # an organisation person in no group of AUTH__ROLE_MAP
    NAME_TAKEN = "NAME_TAKEN"  # an external MCP server of that name exists
    # the backend's: a write sent again with its Idempotency-Key (backend/idempotency)
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"  # the same key with another request
    IDEMPOTENCY_KEY_IN_PROGRESS = "IDEMPOTENCY_KEY_IN_PROGRESS"  # its first is still running
    # the backend's: conversations, their runs and their ends
    NO_MESSAGE = "NO_MESSAGE"
    NOT_ASSISTANT = "NOT_ASSISTANT"
    # the backend's: workflows
    UNKNOWN_WORKFLOW = "UNKNOWN_WORKFLOW"
    EXECUTION_CONFLICT = "EXECUTION_CONFLICT"
    SUPERSEDED = "SUPERSEDED"
    # the backend's: datasources
    SQL_REJECTED = "SQL_REJECTED"
    SQL_ERROR = "SQL_ERROR"
    SQL_TIMEOUT = "SQL_TIMEOUT"
    MIGRATION_FAILED = "MIGRATION_FAILED"
    INVALID_TABLE_NAME = "INVALID_TABLE_NAME"
    # the backend's: dashboards
    VALIDATION_FAILED = "VALIDATION_FAILED"
    CHART_INVALID = "CHART_INVALID"
    BRANCH_EXISTS = "BRANCH_EXISTS"
    INVALID_DEFINITION = "INVALID_DEFINITION"
    NO_CHANGES = "NO_CHANGES"
    NOTHING_TO_MERGE = "NOTHING_TO_MERGE"
    NOT_FAST_FORWARD = "NOT_FAST_FORWARD"
    # the backend's: Superset environments
    SUPERSET_ERROR = "SUPERSET_ERROR"
    SUPERSET_NO_DATABASE = "SUPERSET_NO_DATABASE"
    SUPERSET_CHART_ERROR = "SUPERSET_CHART_ERROR"
    SUPERSET_CHART_MISSING = "SUPERSET_CHART_MISSING"
    # the backend's: object storage
    INVALID_KEY = "INVALID_KEY"
    STORAGE_UNAVAILABLE = "STORAGE_UNAVAILABLE"
    # the backend's: schedules (a run's `error.code`; the agent's stream codes pass through)
    AGENT_UNAVAILABLE = "AGENT_UNAVAILABLE"
    OWNER_INACTIVE = "OWNER_INACTIVE"


# The codes of the stream's sections that the backend writes as well (its envelope, its rows).
_SHARED = frozenset(
    {
        Code.UNAUTHORIZED,
        Code.TOKEN_EXPIRED,
        Code.NOT_FOUND,
        Code.FORBIDDEN,
        Code.INVALID_INPUT,
        Code.CONVERSATION_BUSY,
        Code.CONVERSATION_ARCHIVED,
        Code.NO_ACTIVE_RUN,
        Code.FILE_TOO_LARGE,
        Code.UNSUPPORTED_FILE,
        Code.REJECTED,
        Code.CANCELLED,
        Code.SUPERSET_UNAVAILABLE,
        Code.SUPERSET_LOGIN_REQUIRED,
        Code.SUPERSET_FORBIDDEN,
        Code.RUN_INTERRUPTED,
    }
)
_FIRST_BACKEND_ONLY = list(Code).index(Code.BAD_REQUEST)
# The backend's view: every code it writes (its sections, from BAD_REQUEST on, and the shared).
BACKEND: frozenset[Code] = _SHARED | frozenset(list(Code)[_FIRST_BACKEND_ONLY:])

# The `stop_reason`s of a stopped diagnosis (CONTRACT.md, "Diagnosis"), in the browser too.
DIAGNOSIS_STOP_REASONS = (Code.SATURATED, Code.BUDGET_EXHAUSTED, Code.DEADLINE, Code.CANCELLED)
# The `error.code`s of a failed diagnosis (agent/diagnosis/run.py FAILURES), in the browser too.
DIAGNOSIS_FAILURES = (Code.INVALID_DRAFT, Code.LLM_ERROR)
