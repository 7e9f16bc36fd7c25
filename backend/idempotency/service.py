"""Claim a write's key in its own transaction, answer a repeat from the stored answer, and
store the answer once the write has one.

- `claim` runs in the principal dependency (backend/deps.py), on the request's session, so the
  key's row is committed together with the write (a write rolled back leaves no key; a replica
  SIGKILLed before its commit leaves none either, and the gateway's retry does the write).
- A second request with the same key waits on the first one's uncommitted row (Postgres blocks
  the conflicting INSERT), then reads its answer: replayed as the first answer, with
  `Idempotent-Replayed: true`. A row still without an answer after `WAIT_S` is 409
  IDEMPOTENCY_KEY_IN_PROGRESS (send it again later).
- A key reused with another method, path, query or body is 422 IDEMPOTENCY_KEY_REUSED.
- A route that commits its parts one by one and stores each once by keys of its own says so
  with `@parts_keyed` (the agent's run end, backend/runs/router.py): it is done again where the
  first has no answer after `WAIT_S`, since its key, committed with its first part, outlives a
  database lost before its last (and the delete of the failed write's key), and a 409 would lose
  the rest for good. Any other route answers 409: its write may have committed.
- Only answers below 400 are kept: a write that failed changed nothing, so sending it again
  runs it again. Keys live 24 hours (`TTL`); an older row is replaced and swept.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from starlette.requests import Request

from backend.codes import Code
from backend.db import utcnow
from backend.errors import Conflict, Unprocessable
from backend.idempotency.models import IdempotencyKey
from common import sealed

Endpoint = Callable[..., object]
E = TypeVar("E", bound=Endpoint)

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
KEY = re.compile(r"^[\x21-\x7e]{1,64}$")  # 1-64 visible ASCII characters
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PREFIX = "/api/"
TTL = timedelta(hours=24)
WAIT_S = 5.0  # how long a repeat waits for the first request's answer
MAX_BODY = 1 << 20  # a bigger answer is not kept (the key is forgotten)
# request.state names (the middleware reads them)
BODY_SHA = "idempotency_body_sha"
CLAIMED = "idempotency_claim"


@dataclass(frozen=True)
class Claim:
    """The key this request holds: the middleware stores its answer under it."""

    user_id: uuid.UUID
    key: str
    fingerprint: str


class Replayed(Exception):
    """The first answer to a write sent again: rendered as it was (middleware.install)."""

    def __init__(self, status_code: int, content_type: str | None, body: bytes) -> None:
        super().__init__(status_code)
        self.status_code, self.content_type, self.body = status_code, content_type, body


_PARTS_KEYED: set[Endpoint] = set()


def parts_keyed(endpoint: E) -> E:
    """Mark a write route whose parts are each stored once by keys of their own: sent again
    while its first request has no answer, it is done again instead of refused (see above)."""
    _PARTS_KEYED.add(endpoint)
    return endpoint


def applies(method: str, path: str) -> bool:
    """Whether a request is a write route the key covers."""
    return method in WRITES and path.startswith(PREFIX)


def valid(key: str) -> bool:
    return KEY.fullmatch(key) is not None


async def _fingerprint(request: Request) -> str:
    body_sha = getattr(request.state, BODY_SHA, None)
    if body_sha is None:  # the route read no body: read it now (through the hashing receive)
        body_sha = hashlib.sha256(await request.body()).hexdigest()
    query = request.url.query
    return hashlib.sha256(
        f"{request.method} {request.url.path}?{query}\n{body_sha}".encode()
    ).hexdigest()


async def claim(*, session: AsyncSession, request: Request, user_id: uuid.UUID) -> None:
    """Take the request's key for `user_id` in `session`'s transaction; raise Replayed with the
    first answer, or the error that says why the write cannot be done now."""
    key = request.headers.get(HEADER)
    if key is None or not applies(request.method, request.url.path) or not valid(key):
        return
    fingerprint = await _fingerprint(request)
    insert_key = (
        insert(IdempotencyKey)
        .values(user_id=user_id, key=key, fingerprint=fingerprint, created_at=utcnow())
        .on_conflict_do_nothing()
        .returning(IdempotencyKey.key)
    )
    if await session.scalar(insert_key) is None:
        # an expired key is replaced; anything else is the first request's
        expired = await session.scalar(
            delete(IdempotencyKey)
            .where(
                IdempotencyKey.user_id == user_id,
                IdempotencyKey.key == key,
                IdempotencyKey.created_at < utcnow() - TTL,
            )
            .returning(IdempotencyKey.key)
        )
        if expired is None or await session.scalar(insert_key) is None:
            sealing = request.app.state.settings.mcp_key
            try:
                await _answer_of_first(session, user_id, key, fingerprint, sealing)
            except Conflict:
                if request.scope.get("endpoint") not in _PARTS_KEYED:
                    raise
    setattr(request.state, CLAIMED, Claim(user_id, key, fingerprint))


async def _answer_of_first(
    session: AsyncSession, user_id: uuid.UUID, key: str, fingerprint: str, sealing: str
) -> None:
    """Raise the first request's answer (Replayed), 422 for another request under the same key,
    or 409 while the first has no answer yet."""
    delay = 0.02
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while True:
        row = (
            await session.execute(
                select(
                    IdempotencyKey.fingerprint,
                    IdempotencyKey.status_code,
                    IdempotencyKey.content_type,
                    IdempotencyKey.body,
                ).where(IdempotencyKey.user_id == user_id, IdempotencyKey.key == key)
            )
        ).one_or_none()
        if row is not None and row.fingerprint != fingerprint:
            raise Unprocessable(
                "This Idempotency-Key was used for another request",
                code=Code.IDEMPOTENCY_KEY_REUSED,
            )
        if row is not None and row.status_code is not None:
            body = sealed.unseal_bytes(sealing, row.body) if row.body else b""
            raise Replayed(row.status_code, row.content_type, body)
        if row is None or loop.time() >= deadline:
            break
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.25)
    raise Conflict(
        "A request with this Idempotency-Key has not been answered yet; send it again later",
        code=Code.IDEMPOTENCY_KEY_IN_PROGRESS,
    )


async def record(
    engine: AsyncEngine,
    claim: Claim,
    status_code: int,
    content_type: str | None,
    body: bytes,
    sealing: str,
) -> None:
    """Keep a successful answer under its key, sealed with `sealing` (an answer may hold a
    secret: a new access token), the row written if the write's transaction did not commit one
    (a route that reads only); forget the key of any other answer."""
    async with engine.begin() as conn:
        if status_code >= 400 or len(body) > MAX_BODY:
            await conn.execute(
                delete(IdempotencyKey).where(
                    IdempotencyKey.user_id == claim.user_id,
                    IdempotencyKey.key == claim.key,
                    IdempotencyKey.status_code.is_(None),
                )
            )
            return
        kept = sealed.seal_bytes(sealing, body)
        answer = {"status_code": status_code, "content_type": content_type, "body": kept}
        stmt = insert(IdempotencyKey).values(
            user_id=claim.user_id,
            key=claim.key,
            fingerprint=claim.fingerprint,
            created_at=utcnow(),
            **answer,
        )
        await conn.execute(
            stmt.on_conflict_do_update(
                index_elements=[IdempotencyKey.user_id, IdempotencyKey.key],
                set_=answer,
                where=IdempotencyKey.status_code.is_(None),
            )
        )


async def sweep(engine: AsyncEngine) -> int:
    """Delete the keys older than `TTL`; how many."""
    async with engine.begin() as conn:
        done = await conn.execute(
            delete(IdempotencyKey).where(IdempotencyKey.created_at < utcnow() - TTL)
        )
    return int(done.rowcount or 0)


async def sweep_periodically(engine: AsyncEngine, interval_s: float = 3600.0) -> None:
    """Sweep the expired keys every `interval_s` (each replica; a delete of nothing is cheap)."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            swept = await sweep(engine)
        except (SQLAlchemyError, OSError) as exc:
            log.warning("idempotency key sweep failed: %s", type(exc).__name__)
        else:
            if swept:
                log.info("idempotency keys swept: %d", swept)
