"""The one interface every format parser shares: what a parsed document is, the limits it is
parsed under, and the one error type (its code is a CONTRACT.md stream error code)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agent.errors import AgentError, Code

SUPPORTED_FORMATS = ("PDF", "XLSX", "CSV", "JSON", "PNG", "JPEG")


class Kind(StrEnum):
    pdf = "pdf"
    xlsx = "xlsx"
    csv = "csv"
    json = "json"
    png = "png"
    jpeg = "jpeg"


CONTENT_TYPES = {
    Kind.pdf: "application/pdf",
    Kind.xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    Kind.csv: "text/csv",
    Kind.json: "application/json",
    Kind.png: "image/png",
    Kind.jpeg: "image/jpeg",
}


class DocumentError(AgentError):
    """A file the agent refuses; `code` and `details` go to the stream `error` message as is."""

    def __init__(self, code: Code, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, code=code, details=details)


# Reasons that mean "wrong kind of file": the message itself lists what is accepted.
_TYPE_REASONS = frozenset({"unsupported_type", "unknown_type", "archive", "empty"})


def unsupported(name: str, message: str, *, reason: str, **extra: Any) -> DocumentError:
    """UNSUPPORTED_FILE naming the file, why, and the formats that are accepted."""
    if reason in _TYPE_REASONS:
        message = f"{message} Supported formats: {', '.join(SUPPORTED_FORMATS)}."
    details = {"name": name, "reason": reason, "supported": list(SUPPORTED_FORMATS), **extra}
    return DocumentError(Code.UNSUPPORTED_FILE, message, details)


def too_large(
    name: str, message: str, *, limit: int, reason: str, unit: str = "bytes", **extra: Any
) -> DocumentError:
    """FILE_TOO_LARGE naming the file and the limit it broke (in `unit`)."""
    details = {"name": name, "reason": reason, "limit": limit, "unit": unit, **extra}
    return DocumentError(Code.FILE_TOO_LARGE, message, details)


@dataclass(frozen=True)
class Notice:
    """A CONTRACT.md stream `notice`: something the user should know but not an error."""

    code: str
    message: str
    details: dict[str, Any] | None = None


@dataclass(frozen=True)
class ImageData:
    """An image ready for a model that accepts images (possibly downscaled)."""

    data_url: str
    width: int
    height: int


@dataclass(frozen=True)
class Extract:
    """What a format module returns; the reader adds name, size and hash."""

    text: str
    truncated: bool = False
    notices: tuple[Notice, ...] = ()
    image: ImageData | None = None


@dataclass(frozen=True)
class ParsedDocument:
    name: str
    kind: Kind
    size: int
    sha256: str
    text: str
    truncated: bool
    notices: tuple[Notice, ...] = ()
    image: ImageData | None = None

    @property
    def content_type(self) -> str:
        return CONTENT_TYPES[self.kind]


@dataclass(frozen=True)
class Limits:
    """Bounds on parsing; everything a hostile file could blow up is capped here."""

    max_file_bytes: int = 10 * 1024 * 1024
    max_chars: int = 60_000  # extracted text kept per file (the model sees less: token cap)
    max_rows: int = 500  # per table (CSV, each sheet, each PDF table)
    max_cols: int = 50
    max_cell_chars: int = 200
    max_sheets: int = 20
    max_json_depth: int = 20
    max_json_items: int = 200  # per object or array
    max_unzipped_bytes: int = 200 * 1024 * 1024
    max_zip_ratio: int = 200
    max_zip_members: int = 10_000
    max_image_pixels: int = 50_000_000
    image_max_edge: int = 2048
    accept_images: bool = False  # the configured model takes image content parts
    deadline_s: float = 30.0

    @classmethod
    def from_settings(cls, settings: Any) -> Limits:
        return cls(
            max_file_bytes=settings.agent.max_file_bytes,
            accept_images=settings.llm.supports_images,
        )


@dataclass
class TextSink:
    """Collects lines until `max_chars`; remembers whether anything was cut."""

    max_chars: int
    lines: list[str] = field(default_factory=list)
    used: int = 0
    truncated: bool = False

    def add(self, line: str) -> bool:
        """Append a line; False (and `truncated`) once the next line would not fit."""
        if self.truncated or self.used + len(line) + 1 > self.max_chars:
            self.truncated = True
            return False
        self.lines.append(line)
        self.used += len(line) + 1
        return True

    def text(self) -> str:
        return "\n".join(self.lines)


def cell(value: Any, limits: Limits) -> str:
    """One table cell as single-line text, cut to `max_cell_chars`."""
    text = "" if value is None else str(value)
    text = " ".join(text.split())
    if len(text) > limits.max_cell_chars:
        return text[: limits.max_cell_chars - 1] + "…"
    return text


def table_row(values: Any, limits: Limits) -> str:
    """A row as `a | b | c`, at most `max_cols` cells."""
    cells = [cell(v, limits) for v in list(values)[: limits.max_cols]]
    return " | ".join(cells)
