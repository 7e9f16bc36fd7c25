"""Object storage: list and read text files (viewer)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from backend.codes import Code
from backend.deps import SettingsDep, Viewer
from backend.errors import ServiceUnavailable, responses
from backend.storage import service, store
from backend.storage.schemas import FileItem, FileList, FileRead

router = APIRouter(tags=["storage"])
DEFAULT_LIST = 100
MAX_LIST = 1000


def get_storage(request: Request) -> store.ObjectStorage:
    """The app's store, built on first use (never at import) and kept on app.state."""
    storage: store.ObjectStorage | None = getattr(request.app.state, "object_storage", None)
    if storage is None:
        try:
            storage = store.build(request.app.state.settings.storage)
        except store.StorageConfigError as exc:
            raise ServiceUnavailable(str(exc), code=Code.STORAGE_UNAVAILABLE) from exc
        request.app.state.object_storage = storage
    return storage


StorageDep = Annotated[store.ObjectStorage, Depends(get_storage)]

KEY_RULES = (
    "Keys are relative and '/'-separated. Refused with 422 INVALID_KEY: '.' or '..' segments, "
    "absolute paths, backslashes, NUL and other control characters, percent-encoded traversal "
    "(the key is decoded once more and re-checked), keys over 1024 bytes, and (local store) "
    "keys whose real path leaves the store through a symlink."
)


@router.get(
    "/api/storage/list",
    response_model=FileList,
    responses=responses(401, 403, 422, 503),
    description="Objects whose key starts with `prefix` (e.g. `exports/` or `exports/sales`), "
    "recursively, in key order, as `{items: [{key, size, last_modified}], truncated}`. "
    + KEY_RULES,
)
async def list_files(
    principal: Viewer,
    storage: StorageDep,
    prefix: Annotated[str | None, Query(description="e.g. exports/")] = None,
    limit: Annotated[int, Query(ge=1, description=f"capped at {MAX_LIST}")] = DEFAULT_LIST,
) -> FileList:
    """List stored files."""
    found, truncated = await service.list_files(
        storage=storage, prefix=prefix, limit=min(limit, MAX_LIST)
    )
    return FileList(items=[FileItem(**vars(f)) for f in found], truncated=truncated)


@router.get(
    "/api/storage/read",
    response_model=FileRead,
    responses=responses(401, 403, 404, 413, 415, 422, 503),
    description="One whole text file as `{key, size, content_type, content}`. A file larger "
    "than settings.storage.max_read_bytes is 413 FILE_TOO_LARGE (`details.limit`, "
    "`details.size`); a binary file (NUL bytes or invalid UTF-8) is 415 UNSUPPORTED_FILE; "
    "a missing key is 404. " + KEY_RULES,
)
async def read_file(
    principal: Viewer,
    storage: StorageDep,
    settings: SettingsDep,
    key: Annotated[str, Query(description="e.g. exports/sales_2026_10.csv")],
) -> FileRead:
    """Read a text file."""
    found = await service.read_text(
        storage=storage, key=key, max_bytes=settings.storage.max_read_bytes
    )
    return FileRead(**vars(found))
