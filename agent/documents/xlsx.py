"""XLSX: every sheet as a bounded table (openpyxl read-only, cached formula values), after a
zip-bomb check on the archive's directory."""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path
from typing import Any

import openpyxl
from openpyxl.utils.exceptions import InvalidFileException

from agent.documents.base import Extract, Limits, TextSink, table_row, too_large, unsupported

MIN_SHEET_CHARS = 2000
BOMB_MEMBER_BYTES = 1024 * 1024  # only members larger than this are judged by their ratio
_BROKEN = (InvalidFileException, zipfile.BadZipFile, KeyError, ValueError, TypeError, OSError)


def check_archive(path: Path, name: str, limits: Limits) -> None:
    """Refuse archives whose directory promises too much data or a bomb-like ratio.

    zipfile never inflates a member past the size its directory states, so these checks bound
    what openpyxl can be made to decompress.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError):
        raise unsupported(name, f"{name} is a damaged XLSX file.", reason="corrupt") from None
    total = sum(info.file_size for info in infos)
    if len(infos) > limits.max_zip_members or total > limits.max_unzipped_bytes:
        raise too_large(
            name,
            f"{name} unpacks to {total / 2**20:.0f} MiB in {len(infos)} parts, over the "
            f"{limits.max_unzipped_bytes / 2**20:.0f} MiB limit; it was refused as a zip bomb.",
            limit=limits.max_unzipped_bytes,
            reason="zip_bomb",
            unpacked_bytes=total,
        )
    for info in infos:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > BOMB_MEMBER_BYTES and ratio > limits.max_zip_ratio:
            raise too_large(
                name,
                f"{name} contains a part compressed {ratio:.0f}:1, far beyond any real "
                "spreadsheet; it was refused as a zip bomb.",
                limit=limits.max_unzipped_bytes,
                reason="zip_bomb",
                ratio=round(ratio),
            )


def parse(path: Path, *, name: str, limits: Limits) -> Extract:
    """Each sheet (up to `max_sheets`) as `## Sheet` + rows, sharing the text budget."""
    check_archive(path, name, limits)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # openpyxl warns about styles and extensions
            book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except _BROKEN:
        raise unsupported(name, f"{name} is a damaged XLSX file.", reason="corrupt") from None
    try:
        sheets = book.worksheets
        shown = sheets[: limits.max_sheets]
        share = max(limits.max_chars // max(len(shown), 1), MIN_SHEET_CHARS)
        parts, cut = [f"XLSX {name}: {len(sheets)} sheets"], len(sheets) > len(shown)
        for sheet in shown:
            text, sheet_cut = _sheet(sheet, min(share, limits.max_chars), limits)
            parts.append(text)
            cut = cut or sheet_cut
    except _BROKEN:
        raise unsupported(name, f"{name} is a damaged XLSX file.", reason="corrupt") from None
    finally:
        book.close()
    if len(sheets) > len(shown):
        parts.append(f"[only the first {len(shown)} of {len(sheets)} sheets are shown]")
    return Extract(text="\n".join(parts)[: limits.max_chars], truncated=cut)


def _sheet(sheet: Any, max_chars: int, limits: Limits) -> tuple[str, bool]:
    sink = TextSink(max_chars)
    seen = 0
    rows = sheet.iter_rows(max_row=limits.max_rows + 1, max_col=limits.max_cols, values_only=True)
    for row in rows:
        if all(value is None for value in row):
            continue
        seen += 1
        if seen > limits.max_rows or not sink.add(table_row(_trim(row), limits)):
            break
    if sheet.max_row is not None and sheet.max_column is not None:
        size = f"{sheet.max_row} rows x {sheet.max_column} columns"
    else:
        size = "size not recorded in the file"
    head = f'## Sheet "{sheet.title}" ({size})'
    shown = len(sink.lines)
    cut = sink.truncated or seen > limits.max_rows
    tail = [f"[only the first {shown} rows of this sheet are shown]"] if cut else []
    return "\n".join([head, *sink.lines, *tail]), cut


def _trim(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop trailing empty cells (read-only rows are padded to the sheet's width)."""
    end = len(row)
    while end and row[end - 1] is None:
        end -= 1
    return row[:end]
