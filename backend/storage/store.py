"""The object store behind the storage API, built from settings.storage.url through obstore.

`file://DIR` is a local directory (confined: no symlink may lead out of it); `s3://BUCKET/PREFIX`
is any S3-compatible service (endpoint, region and keys from settings.storage.s3_*).
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

import obstore
from obstore.store import LocalStore, S3Store

from backend.codes import Code
from backend.config import StorageSettings
from backend.errors import Unprocessable

if TYPE_CHECKING:
    from obstore import ObjectMeta
    from obstore.store import ClientConfig, RetryConfig, S3Config

# How many directory listings one local walk may make before it stops (symlink farms, huge trees).
MAX_LISTINGS_PER_WALK = 2_000


class StorageConfigError(ValueError):
    """settings.storage.url names a scheme or a location this backend cannot use."""


class ObjectStorage:
    """One obstore store; for a local directory, also the real root it must never leave."""

    def __init__(self, store: LocalStore | S3Store, *, local_root: Path | None) -> None:
        self.store = store
        self.local_root = local_root

    def confine(self, key: str) -> None:
        """Refuse a local key whose real path (after symlinks) is outside the root."""
        if self.local_root is None:
            return
        real = Path(self._real(key))
        if real != self.local_root and not real.is_relative_to(self.local_root):
            raise Unprocessable(
                "Invalid key: it resolves outside the store",
                code=Code.INVALID_KEY,
                details={"key": key},
            )

    def _real(self, key: str) -> str:
        # A few lstat calls on a local disk: cheaper inline than a thread hop.
        assert self.local_root is not None
        return os.path.realpath(self.local_root / key)

    def _inside(self, key: str) -> bool:
        try:
            self.confine(key)
        except Unprocessable:
            return False
        return True

    async def head(self, key: str) -> ObjectMeta:
        self.confine(key)
        return await obstore.head_async(self.store, key)

    async def get(self, key: str) -> bytes:
        self.confine(key)
        result = await obstore.get_async(self.store, key)
        return bytes(await result.bytes_async())

    async def put(self, key: str, data: bytes) -> None:
        self.confine(key)
        await obstore.put_async(self.store, key, data)

    async def iter_objects(self, prefix: str) -> AsyncGenerator[ObjectMeta, None]:
        """Objects under `prefix` in key order; locally, symlinks out of the root are skipped."""
        if self.local_root is None:
            async for chunk in obstore.list(self.store, prefix or None, chunk_size=500):
                for meta in chunk:
                    yield meta
            return
        async for meta in self._walk_local(prefix):
            yield meta

    async def _walk_local(self, prefix: str) -> AsyncGenerator[ObjectMeta, None]:
        """Depth-first, children sorted so that "dir/" sits among file names: key order."""
        assert self.local_root is not None
        stack: list[tuple[str, ObjectMeta | None, frozenset[str]]] = [(prefix, None, frozenset())]
        listings = 0
        while stack and listings < MAX_LISTINGS_PER_WALK:
            name, meta, ancestors = stack.pop()
            if meta is not None:
                if self._inside(name):
                    yield meta
                continue
            real = self._real(name)
            if real in ancestors or not self._inside(name):
                continue  # a symlink loop, or a link leading out of the root
            listings += 1
            level = await obstore.list_with_delimiter_async(self.store, name or None)
            entries: list[tuple[str, ObjectMeta | None, frozenset[str]]]
            entries = [(m["path"], m, ancestors) for m in level["objects"]]
            entries += [(p, None, ancestors | {real}) for p in level["common_prefixes"]]
            entries.sort(key=lambda e: e[0] + ("/" if e[1] is None else ""), reverse=True)
            stack.extend(entries)


def _local(url: str) -> ObjectStorage:
    root = Path(unquote(url.removeprefix("file://"))).expanduser()
    root = root if root.is_absolute() else Path.cwd() / root
    root.mkdir(parents=True, exist_ok=True)
    real = Path(os.path.realpath(root))
    return ObjectStorage(LocalStore(real), local_root=real)


def _s3(url: str, settings: StorageSettings) -> ObjectStorage:
    parsed = urlparse(url)
    if not parsed.netloc:
        raise StorageConfigError("storage URL s3://BUCKET[/PREFIX] names no bucket")
    config: S3Config = {"region": settings.s3_region}
    if settings.s3_endpoint:
        config["endpoint"] = settings.s3_endpoint
    if settings.s3_access_key_id and settings.s3_secret_access_key:
        config["access_key_id"] = settings.s3_access_key_id.get_secret_value()
        config["secret_access_key"] = settings.s3_secret_access_key.get_secret_value()
    client: ClientConfig = {
        "timeout": timedelta(seconds=30),
        "connect_timeout": timedelta(seconds=5),
        "allow_http": bool(settings.s3_endpoint and settings.s3_endpoint.startswith("http://")),
    }
    retry: RetryConfig = {"max_retries": 2, "retry_timeout": timedelta(seconds=15)}
    store = S3Store(
        parsed.netloc,
        prefix=parsed.path.strip("/") or None,
        config=config,
        client_options=client,
        retry_config=retry,
    )
    return ObjectStorage(store, local_root=None)


def build(settings: StorageSettings) -> ObjectStorage:
    """The store that settings.storage.url names; creates a local root directory if needed."""
    url = settings.url
    if url.startswith("file://"):
        return _local(url)
    if url.startswith("s3://"):
        return _s3(url, settings)
    scheme = url.split(":", 1)[0] if ":" in url else url
    raise StorageConfigError(f"unsupported storage URL scheme {scheme!r}: use file:// or s3://")
