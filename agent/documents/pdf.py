"""PDF: text and tables per page (pdfplumber), with page markers, bounded in size and time."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pdfplumber
from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
from pdfminer.psexceptions import PSException
from pdfplumber.page import Page
from pdfplumber.utils.exceptions import MalformedPDFException, PdfminerException

from agent.documents.base import Extract, Limits, Notice, TextSink, table_row, unsupported
from agent.errors import Code

# What pdfminer/pdfplumber raise on hostile or broken input, at open or per page.
_BROKEN = (
    PdfminerException,
    MalformedPDFException,
    PSException,
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    AttributeError,
)


def parse(path: Path, *, name: str, limits: Limits) -> Extract:
    """Pages in order until the text budget or the time budget runs out."""
    deadline = time.monotonic() + limits.deadline_s
    sink = TextSink(limits.max_chars)
    notices: list[Notice] = []
    try:
        with pdfplumber.open(path) as pdf:
            total = len(pdf.pages)
            read = 0
            for number, page in enumerate(pdf.pages, start=1):
                if sink.truncated or time.monotonic() > deadline:
                    break
                _page(page, number, total, sink, limits)
                page.close()  # drop pdfplumber's per-page object cache: memory stays flat
                read = number
    except _BROKEN as exc:
        raise _error(name, exc) from None
    if read < total:
        sink.truncated = True
        sink.lines.append(f"[only pages 1-{read} of {total} were read]")
    if not any(line.strip() and not line.startswith("--- page") for line in sink.lines):
        notices.append(
            Notice(Code.NO_TEXT, f"{name} has no extractable text (it may be a scanned image).")
        )
    return Extract(text=sink.text(), truncated=sink.truncated, notices=tuple(notices))


def _page(page: Page, number: int, total: int, sink: TextSink, limits: Limits) -> None:
    sink.add(f"--- page {number} of {total} ---")
    tables = page.find_tables()
    boxes = [table.bbox for table in tables]
    prose = page.filter(lambda obj: not _inside(obj, boxes)) if boxes else page
    for line in (prose.extract_text() or "").splitlines():
        if not sink.add(line):
            return
    for index, table in enumerate(tables, start=1):
        rows = table.extract()
        sink.add(f"[table {index} on page {number}: {len(rows)} rows]")
        for row in rows[: limits.max_rows]:
            if not sink.add(table_row(row, limits)):
                return


def _inside(obj: dict[str, Any], boxes: list[tuple[float, float, float, float]]) -> bool:
    if "x0" not in obj or "top" not in obj:
        return False
    x = (obj["x0"] + obj["x1"]) / 2
    y = (obj["top"] + obj["bottom"]) / 2
    return any(x0 <= x <= x1 and top <= y <= bottom for x0, top, x1, bottom in boxes)


def _error(name: str, exc: Exception) -> Exception:
    cause = exc.args[0] if isinstance(exc, PdfminerException) and exc.args else exc
    if isinstance(cause, PDFPasswordIncorrect | PDFEncryptionError):
        return unsupported(
            name,
            f"{name} is password-protected. Remove the password and attach it again.",
            reason="encrypted",
        )
    return unsupported(
        name, f"{name} is damaged or not a valid PDF and cannot be read.", reason="corrupt"
    )
