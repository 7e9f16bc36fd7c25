"""One exception tree, rendered once as {"error": {"code", "message", "details"}}."""

from __future__ import annotations

import logging
import socket
import uuid
from typing import Any

import asyncpg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as SQLAlchemyTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from backend.codes import Code

log = logging.getLogger("backend.errors")


class AppError(Exception):
    status_code = 400
    code: str = Code.BAD_REQUEST

    def __init__(
        self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.code
        self.details = details or {}


class Unauthorized(AppError):
    status_code = 401
    code = Code.UNAUTHORIZED


class Forbidden(AppError):
    status_code = 403
    code = Code.FORBIDDEN


class NotFound(AppError):
    status_code = 404
    code = Code.NOT_FOUND


class Conflict(AppError):
    status_code = 409
    code = Code.CONFLICT


class PayloadTooLarge(AppError):
    status_code = 413
    code = Code.PAYLOAD_TOO_LARGE


class Unprocessable(AppError):
    status_code = 422
    code = Code.INVALID_INPUT


class ServiceUnavailable(AppError):
    status_code = 503
    code = Code.UNAVAILABLE


class ErrorBody(BaseModel):
    code: str
    message: str
    details: dict[str, Any] = {}


class ErrorResponse(BaseModel):
    """The envelope of every non-2xx JSON response."""

    error: ErrorBody


_HTTP_CODES = {
    400: Code.BAD_REQUEST,
    401: Code.UNAUTHORIZED,
    403: Code.FORBIDDEN,
    404: Code.NOT_FOUND,
    405: Code.METHOD_NOT_ALLOWED,
    409: Code.CONFLICT,
    413: Code.PAYLOAD_TOO_LARGE,
    422: Code.INVALID_INPUT,
    429: Code.RATE_LIMITED,
}


def envelope(
    status: int,
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    return JSONResponse(status_code=status, content=body, headers=headers)


def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses=` entries documenting the error envelope for these statuses."""
    return {s: {"model": ErrorResponse, "description": _description(s)} for s in statuses}


def _description(status: int) -> str:
    return _INVALID_DESCRIPTION if status == 422 else _HTTP_CODES.get(status, "Error")


# FastAPI answers a body it cannot decode (bytes that are not UTF-8, JSON nested past the
# parser's depth, a broken multipart form) with this 400, while a body that is not JSON at all is
# already a 422 `json_invalid`: both become that one documented 422.
_UNPARSEABLE_BODY = "There was an error parsing the body"
_INVALID_DESCRIPTION = (
    "INVALID_INPUT: a parameter or body field is invalid, or the body cannot be parsed "
    "(not JSON, not UTF-8, a broken form); `details.errors` lists each problem"
)


def _unparseable(exc: Exception) -> JSONResponse:
    cause = exc.__cause__
    reason = type(cause).__name__ if cause is not None else "unparseable"
    error = {
        "loc": ["body"],
        "msg": f"The body cannot be parsed ({reason})",
        "type": "json_invalid",
    }
    return envelope(422, Code.INVALID_INPUT, "Request is invalid", {"errors": [error]})


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def _app_error(request: Request, exc: AppError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None
        return envelope(exc.status_code, exc.code, exc.message, exc.details, headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()
        ]
        return envelope(422, Code.INVALID_INPUT, "Request is invalid", {"errors": errors})

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and exc.detail == _UNPARSEABLE_BODY:
            return _unparseable(exc)
        code = _HTTP_CODES.get(exc.status_code, Code.HTTP_ERROR)
        return envelope(exc.status_code, code, str(exc.detail), headers=dict(exc.headers or {}))

    @app.exception_handler(DBAPIError)
    async def _database(request: Request, exc: DBAPIError) -> JSONResponse:
        if store_unreachable(exc):
            return _store_unavailable(request, exc)
        sqlstate = str(getattr(exc.orig, "sqlstate", None) or "")
        # SQLSTATE class 22 (data exception): the request carried a value Postgres refuses,
        # e.g. a NUL character in text or JSON. That is bad input, not a server fault.
        if sqlstate.startswith("22"):
            log.warning("rejected value: sqlstate=%s path=%s", sqlstate, request.url.path)
            return envelope(
                422, Code.INVALID_INPUT, "Request contains a value that cannot be stored"
            )
        return await _unexpected(request, exc)

    for lost in UNREACHABLE:

        @app.exception_handler(lost)
        async def _unreachable(request: Request, exc: Exception) -> JSONResponse:
            if store_unreachable(exc):
                return _store_unavailable(request, exc)
            return await _unexpected(request, exc)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        request_id = getattr(request.state, "request_id", None) or uuid.uuid4().hex
        log.exception("unhandled error request_id=%s path=%s", request_id, request.url.path)
        return envelope(
            500,
            Code.INTERNAL,
            "Internal server error",
            {"request_id": request_id},
            headers={"X-Request-ID": request_id},
        )


# Raised while the database is unreachable (restarting, stopped, the network cut): a
# connection that cannot be opened, one dropped under a query, a pool with none to give.
UNREACHABLE: tuple[type[Exception], ...] = (
    OSError,  # only a failed connect (below), not a file that cannot be read
    SQLAlchemyTimeout,
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.InterfaceError,
)
# SQLSTATE classes of a lost server: 08 connection exception, 57 operator intervention
# (admin shutdown, the database starting up), 53 insufficient resources (too many clients).
_LOST_SQLSTATES = ("08", "57", "53")


def store_unreachable(exc: BaseException) -> bool:
    """Whether `exc` means the database is away (a 503 to retry), not a bad request or a bug."""
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return True
        orig = exc.orig
        sqlstate = str(getattr(orig, "sqlstate", None) or "")
        if sqlstate.startswith(_LOST_SQLSTATES):
            return True
        cause = getattr(orig, "__cause__", None) or orig
        if not isinstance(cause, BaseException):
            return False
        exc = cause
    if str(getattr(exc, "sqlstate", None) or "").startswith(_LOST_SQLSTATES):
        return True  # asyncpg's own: CannotConnectNowError (57P03), AdminShutdownError, ...
    if isinstance(exc, ConnectionError | socket.gaierror):
        return True
    if isinstance(exc, OSError):  # asyncpg: "Multiple exceptions: [Errno 111] Connect call ..."
        return type(exc) is OSError and "connect" in str(exc).lower()
    return isinstance(exc, UNREACHABLE)


def _store_unavailable(request: Request, exc: BaseException) -> JSONResponse:
    log.warning("database unreachable: %s path=%s", type(exc).__name__, request.url.path)
    return envelope(
        503,
        Code.STORE_UNAVAILABLE,
        "The database is not answering; try again.",
        headers={"Retry-After": "1"},
    )


_ENVELOPE_REF = "#/components/schemas/ErrorResponse"
_DEFAULT_422 = "#/components/schemas/HTTPValidationError"


def install_openapi(app: FastAPI) -> None:
    """Document FastAPI's automatic 422 as the envelope that `_validation` really returns."""
    default = app.openapi

    def openapi() -> dict[str, Any]:
        first = app.openapi_schema is None
        schema = default()  # FastAPI caches it in app.openapi_schema
        if first:
            _envelope_for_validation(schema)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _envelope_for_validation(schema: dict[str, Any]) -> None:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    if "ErrorResponse" not in components:
        generated = ErrorResponse.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(generated.pop("$defs", {}))
        components["ErrorResponse"] = generated
    invalid = {
        "description": _INVALID_DESCRIPTION,
        "content": {"application/json": {"schema": {"$ref": _ENVELOPE_REF}}},
    }
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            responses = operation.setdefault("responses", {})
            content = responses.get("422", {}).get("content", {})
            body = content.get("application/json", {})
            if body.get("schema", {}).get("$ref") == _DEFAULT_422:
                body["schema"] = {"$ref": _ENVELOPE_REF}
            if "422" in responses:
                responses["422"]["description"] = _INVALID_DESCRIPTION
            elif "requestBody" in operation:  # every body can be malformed
                responses["422"] = invalid
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
