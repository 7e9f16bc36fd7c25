"""Decide what a file is from its content (signatures, then the zip directory), not its name.

Binary files must carry a PDF, PNG, JPEG or XLSX signature; anything else with a known
signature (executables, archives, media) is refused. Files without a signature are text
candidates: JSON when they start like JSON, otherwise CSV; the parsers confirm by parsing.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import filetype

from agent.documents.base import Kind, unsupported

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"
PDF_MAGIC = b"%PDF-"
ZIP_MAGIC = b"PK\x03\x04"
HEAD_BYTES = 8192
_JSON_START = (b"{", b"[")
_BOMS = (b"\xef\xbb\xbf",)


def kind_of(path: Path, name: str) -> Kind:
    """The file's kind; raises UNSUPPORTED_FILE for anything that is not one of ours."""
    with path.open("rb") as f:
        head = f.read(HEAD_BYTES)
    if not head:
        raise unsupported(name, f"{name} is empty.", reason="empty")
    if head.startswith(PNG_MAGIC):
        return Kind.png
    if head.startswith(JPEG_MAGIC):
        return Kind.jpeg
    if PDF_MAGIC in head[:1024]:
        return Kind.pdf
    if head.startswith(ZIP_MAGIC):
        return _zip_kind(path, name)
    guess = filetype.guess(head)
    if guess is not None:
        raise unsupported(
            name,
            f"{name} is not a file the assistant can read (it is {guess.mime}).",
            reason="unsupported_type",
            detected=guess.mime,
        )
    return _text_kind(head)


def _zip_kind(path: Path, name: str) -> Kind:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError):
        raise unsupported(name, f"{name} is a damaged ZIP container.", reason="corrupt") from None
    if "xl/workbook.xml" in names:
        return Kind.xlsx
    raise unsupported(
        name,
        f"{name} is a ZIP archive; archives are not accepted. Attach the files themselves.",
        reason="archive",
        detected="application/zip",
    )


def _text_kind(head: bytes) -> Kind:
    stripped = head
    for bom in _BOMS:
        stripped = stripped.removeprefix(bom)
    stripped = stripped.lstrip()
    return Kind.json if stripped.startswith(_JSON_START) else Kind.csv
