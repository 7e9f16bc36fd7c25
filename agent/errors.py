"""The agent's one error tree, over the one code list both processes share.

Every coded failure of a run derives from `AgentError`; the run skeleton renders it once, as a
stream `error` message (CONTRACT.md, "Stream protocol"). `Code` is common/codes.py's (re-exported
here for the agent's modules); the browser's list is generated from it (frontend/src/lib/codes.ts).
"""

from __future__ import annotations

from typing import Any

import aiohttp

from common.codes import Code

# The backend's codes (common/codes.py `BACKEND`) the agent reads from an error envelope and acts
# on; tests/agent/unit/test_codes.py checks that each one is a code the backend writes, so a code
# the backend stops writing fails a test, not a run.
BACKEND_CODES: frozenset[str] = frozenset(
    {
        Code.UNAUTHORIZED,  # runs/skeleton.py: the user's token refused
        Code.TOKEN_EXPIRED,
        Code.FORBIDDEN,  # diagnosis/projection.py
        Code.NOT_FOUND,
        Code.INVALID_INPUT,
        Code.CONVERSATION_BUSY,  # lease.py: the lease is someone else's
        Code.CONVERSATION_ARCHIVED,  # lease.py, runs/skeleton.py: archived under the run
        Code.NO_ACTIVE_RUN,  # runs/viewers.py: nothing to attach to
        Code.SQL_REJECTED,  # diagnosis/projection.py: a query's refusal, each with its sentence
        Code.SQL_ERROR,
        Code.SQL_TIMEOUT,
        Code.SUPERSET_UNAVAILABLE,  # a tool's Superset did not answer
        Code.SUPERSET_LOGIN_REQUIRED,  # tools/calls.py: kept as the tool error's code
        Code.SUPERSET_FORBIDDEN,
    }
)


class AgentError(Exception):
    """A failure with a stream code, a message that is safe to show, and optional details."""

    code: str = Code.INTERNAL_ERROR  # a `Code` member (a workflow step's: the backend's code)

    def __init__(
        self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details or {}


class InvalidInput(AgentError):
    code = Code.INVALID_INPUT


class Unauthorized(AgentError):
    code = Code.UNAUTHORIZED


class NotFound(AgentError):
    code = Code.NOT_FOUND


class Busy(AgentError):
    code = Code.CONVERSATION_BUSY


class LeaseLost(AgentError):
    """The run's lease is gone under it: another run took the conversation
    (CONVERSATION_BUSY) or it was archived (CONVERSATION_ARCHIVED). `Run.check` raises it;
    whoever must tidy up after a lost lease catches this, never a code."""


class LlmFailure(AgentError):
    """The model failed (5xx, timeout, malformed output) and one retry did not help."""

    code = Code.LLM_ERROR


class BudgetExhausted(AgentError):
    code = Code.BUDGET_EXHAUSTED


class UsageLimit(AgentError):
    """The user's daily token budget is used up (CONTRACT.md, "Usage and budgets")."""

    code = Code.USAGE_LIMIT


class Unavailable(AgentError):
    """The backend or the conversation store is not answering."""

    code = Code.BACKEND_UNAVAILABLE


class BackendError(AgentError):
    """A non-2xx answer (or no answer) from the backend, parsed from its error envelope.

    `code` is the backend's own (backend/codes.py); `shown()` is what a person is told, the one
    mapping of a backend failure to a stream code.
    """

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message, code=code, details=details)
        self.args = (f"{status} {code}: {message}",)
        self.status = status

    def shown(self) -> AgentError:
        """The stream's error for this failure of a conversation's request: 404 and 422 are
        NOT_FOUND, 401 keeps TOKEN_EXPIRED (else UNAUTHORIZED), anything else is the backend
        not answering (BACKEND_UNAVAILABLE). The backend's own message is shown only for 401."""
        if self.status in (404, 422):
            return NotFound("Conversation not found.")
        if self.status == 401:
            code = Code.TOKEN_EXPIRED if self.code == Code.TOKEN_EXPIRED else Code.UNAUTHORIZED
            return Unauthorized(self.message, code=code)
        return Unavailable("The platform is not answering; try again.")


class BackendUnreachable(BackendError):
    """No connection to the backend could be opened: the request was never sent, so sending it
    again is safe even for a write."""

    def __init__(self) -> None:
        super().__init__(503, Code.BACKEND_UNAVAILABLE, "The backend is unreachable")


def aiohttp_error(exc: BaseException) -> aiohttp.ClientError | None:
    """The aiohttp error in `exc`'s chain of causes (`exc` itself included), if any.

    The aiohttp transports under the backend client (httpx-aiohttp) and the model client (the
    OpenAI SDK's) report every connection error as a connect timeout, a refused connection and
    one the server closed among them: the aiohttp error they wrap says what happened.
    """
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, aiohttp.ClientError):
            return cause
        cause = cause.__cause__
    return None
