"""Per-turn preparation: every attached file checked and parsed before anything is written or
any model is called, then turned into content for the user's message."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.documents import injection, reader, uploads
from agent.documents.base import DocumentError, Limits, Notice, ParsedDocument
from agent.errors import Code


@dataclass(frozen=True)
class PreparedAttachments:
    """What one turn's files contribute: context text, image parts, notices, records."""

    documents: tuple[ParsedDocument, ...] = ()
    blocks: tuple[str, ...] = ()
    images: tuple[dict[str, Any], ...] = ()
    notices: tuple[Notice, ...] = ()

    def content(self, text: str) -> str | list[str | dict[str, Any]]:
        """The user message content: the text plus attachment blocks, plus image parts."""
        body = "\n\n".join([text, *self.blocks]) if self.blocks else text
        if not self.images:
            return body
        return [{"type": "text", "text": body}, *self.images]

    def metadata(self) -> list[dict[str, Any]]:
        """What the history lists for the user message (`metadata.attachments`)."""
        return [
            {
                "name": d.name,
                "content_type": d.content_type,
                "size": d.size,
                "sha256": d.sha256,
                "truncated": d.truncated,
            }
            for d in self.documents
        ]

    def records(self) -> list[dict[str, Any]]:
        """The backend attachment rows: metadata plus the (bounded) extracted text."""
        return [
            {**meta, "extracted_text": doc.text}
            for meta, doc in zip(self.metadata(), self.documents, strict=True)
        ]


def _display_name(raw: str, original: Any) -> str:
    name = str(original or "") or raw.replace("\\", "/").rstrip("/").rpartition("/")[2]
    return name[:200] or "file"


def file_entry(entry: Any, root: Path | None = None) -> tuple[Path, str]:
    """(path, display name) of an uploaded file from what Gradio hands over (a path, or a
    FileData-like dict); anything not uploaded to this app is UNSUPPORTED_FILE, unopened."""
    raw: Any
    original: Any
    if isinstance(entry, str | Path):
        raw, original = str(entry), None
    elif isinstance(entry, dict):
        raw, original = entry.get("path"), entry.get("orig_name")
    else:
        raw, original = getattr(entry, "path", None), getattr(entry, "orig_name", None)
    if not raw:
        raise DocumentError(Code.INVALID_INPUT, "An attached file has no path.", {})
    name = _display_name(str(raw), original)
    return uploads.checked_path(raw, name, root), name


async def prepare_attachments(
    files: list[Any] | None, settings: Any, *, root: Path | None = None
) -> PreparedAttachments:
    """Check where each file comes from, count and sizes first, then parse each file off the
    event loop. `root` is the upload folder (Gradio's, by default).

    Raises DocumentError (UNSUPPORTED_FILE, FILE_TOO_LARGE, INVALID_INPUT) before any side effect.
    """
    limit, count = settings.agent.max_files, len(files or [])
    if count > limit:
        raise DocumentError(
            Code.INVALID_INPUT,
            f"At most {limit} files can be attached to one message ({count} were).",
            {"max_files": limit, "count": count},
        )
    entries = [file_entry(f, root) for f in files or []]
    if not entries:
        return PreparedAttachments()
    limits = Limits.from_settings(settings)
    for path, name in entries:
        reader.check_size(path, name, limits)
    docs = [
        await asyncio.to_thread(reader.parse, path, name=name, limits=limits)
        for path, name in entries
    ]
    blocks, cut_notices = injection.fit(docs, injection.token_cap(settings))
    images = tuple(
        {"type": "image_url", "image_url": {"url": d.image.data_url}} for d in docs if d.image
    )
    notices = tuple(n for d in docs for n in d.notices) + tuple(cut_notices)
    return PreparedAttachments(tuple(docs), tuple(blocks), images, notices)
