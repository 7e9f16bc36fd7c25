"""One entry point for every format: size check, content sniffing, the format's parser, hash."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.documents import csv_, image, json_, pdf, sniff, xlsx
from agent.documents.base import (
    DocumentError,
    Extract,
    Kind,
    Limits,
    ParsedDocument,
    too_large,
    unsupported,
)

Parser = Callable[..., Extract]
PARSERS: dict[Kind, Parser] = {
    Kind.pdf: pdf.parse,
    Kind.xlsx: xlsx.parse,
    Kind.csv: csv_.parse,
    Kind.json: json_.parse,
    Kind.png: image.parse,
    Kind.jpeg: image.parse,
}


def check_size(path: Path, name: str, limits: Limits) -> int:
    """The size on disk; over `max_file_bytes` is FILE_TOO_LARGE, a missing file is refused."""
    try:
        size = path.stat().st_size
    except OSError:
        raise unsupported(name, f"{name} could not be read.", reason="missing") from None
    if not path.is_file():
        raise unsupported(name, f"{name} is not a regular file.", reason="not_a_file")
    if size > limits.max_file_bytes:
        raise too_large(
            name,
            f"{name} is {size:,} bytes; files may be at most {limits.max_file_bytes:,} bytes "
            f"({limits.max_file_bytes / 2**20:g} MB).",
            limit=limits.max_file_bytes,
            reason="file_size",
            size=size,
        )
    return size


def parse(
    path: Path | str, *, settings: Any = None, name: str | None = None, limits: Limits | None = None
) -> ParsedDocument:
    """Parse one file of any supported format; raises DocumentError with a stream error code."""
    path = Path(path)
    if limits is None:
        limits = Limits.from_settings(settings) if settings is not None else Limits()
    name = name or path.name
    size = check_size(path, name, limits)
    kind = sniff.kind_of(path, name)
    kind, extract = _parse_as(kind, path, name, limits)
    return ParsedDocument(
        name=name,
        kind=kind,
        size=size,
        sha256=sha256(path),
        text=extract.text,
        truncated=extract.truncated,
        notices=extract.notices,
        image=extract.image,
    )


def _parse_as(kind: Kind, path: Path, name: str, limits: Limits) -> tuple[Kind, Extract]:
    try:
        return kind, PARSERS[kind](path, name=name, limits=limits)
    except DocumentError as exc:
        # Text that merely starts like JSON may still be a CSV the user named as such.
        named_csv = Path(name).suffix.lower() in (".csv", ".tsv")
        if kind is Kind.json and exc.details.get("reason") == "invalid_json" and named_csv:
            return Kind.csv, csv_.parse(path, name=name, limits=limits)
        raise


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
