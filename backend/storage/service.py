"""Listing the store and reading text files from it, with size and content checks."""

from __future__ import annotations

import mimetypes
from collections.abc import Iterator
from contextlib import aclosing, contextmanager
from dataclasses import dataclass
from datetime import datetime

import obstore.exceptions

from backend.codes import Code
from backend.errors import AppError, NotFound, PayloadTooLarge, ServiceUnavailable, Unprocessable
from backend.storage.keys import normalise_key, normalise_prefix
from backend.storage.store import ObjectStorage


class UnsupportedFile(AppError):
    status_code = 415
    code = Code.UNSUPPORTED_FILE


@dataclass(frozen=True)
class StoredFile:
    key: str
    size: int
    last_modified: datetime


@dataclass(frozen=True)
class TextFile:
    key: str
    size: int
    content_type: str
    content: str


@contextmanager
def _store_errors(key: str) -> Iterator[None]:
    """obstore's failures as API errors: missing -> 404, bad path -> 422, anything else -> 503."""
    try:
        yield
    except (FileNotFoundError, obstore.exceptions.NotFoundError) as exc:
        raise NotFound("File not found", details={"key": key}) from exc
    except (ValueError, obstore.exceptions.InvalidPathError) as exc:
        raise Unprocessable("Invalid key", code=Code.INVALID_KEY, details={"key": key}) from exc
    except (OSError, obstore.exceptions.BaseError) as exc:
        raise ServiceUnavailable(
            "Object storage is unavailable", code=Code.STORAGE_UNAVAILABLE, details={"key": key}
        ) from exc


async def list_files(
    *, storage: ObjectStorage, prefix: str | None, limit: int
) -> tuple[list[StoredFile], bool]:
    """Up to `limit` objects whose key starts with `prefix`, in key order; and if more exist."""
    clean = normalise_prefix(prefix)
    directory = clean.rsplit("/", 1)[0] if "/" in clean else ""
    found: list[StoredFile] = []
    with _store_errors(clean):
        async with aclosing(storage.iter_objects(directory)) as objects:
            async for meta in objects:
                key = meta["path"]
                if not key.startswith(clean):
                    if key > clean:
                        break  # keys come in order: past the matching range
                    continue
                if len(found) == limit:
                    return found, True
                found.append(StoredFile(key, meta["size"], meta["last_modified"]))
    return found, False


def _decode(key: str, data: bytes) -> str:
    """UTF-8 text or 415 UNSUPPORTED_FILE: NUL bytes or invalid UTF-8 mean a binary file."""
    if b"\x00" in data:
        raise UnsupportedFile(
            "This is a binary file; only text files can be read",
            details={"key": key, "reason": "nul_bytes"},
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnsupportedFile(
            "This file is not UTF-8 text; only text files can be read",
            details={"key": key, "reason": "invalid_utf8", "offset": exc.start},
        ) from exc


def _too_large(key: str, size: int, limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"The file is {size} bytes; at most {limit} bytes can be read",
        code=Code.FILE_TOO_LARGE,
        details={"key": key, "size": size, "limit": limit},
    )


async def read_text(*, storage: ObjectStorage, key: str, max_bytes: int) -> TextFile:
    """A whole text file, refused when larger than `max_bytes` or binary."""
    clean = normalise_key(key)
    with _store_errors(clean):
        meta = await storage.head(clean)
        if meta["size"] > max_bytes:
            raise _too_large(clean, meta["size"], max_bytes)
        data = await storage.get(clean)
    if len(data) > max_bytes:  # it grew between the two calls
        raise _too_large(clean, len(data), max_bytes)
    content_type = mimetypes.guess_type(clean)[0] or "text/plain"
    return TextFile(clean, len(data), content_type, _decode(clean, data))
