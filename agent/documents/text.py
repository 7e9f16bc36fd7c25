"""Text files: decode bytes whose encoding nobody told us (BOM, UTF-8, then charset-normalizer)."""

from __future__ import annotations

import codecs
from pathlib import Path

import charset_normalizer

from agent.documents.base import unsupported

MAC_TOLERANCE = 0.01
TEXT_SUFFIXES = frozenset({".csv", ".tsv", ".json", ".txt"})
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def decode(data: bytes, name: str) -> tuple[str, str]:
    """(text, encoding); a file no encoding explains is refused with a clear message."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding), encoding
            except UnicodeDecodeError:
                raise _undecodable(name) from None
    if b"\x00" not in data:
        try:
            return data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            pass
    matches = charset_normalizer.from_bytes(data)
    best = matches.best()
    if best is None:
        raise _undecodable(name)
    if best.encoding.startswith("mac_"):
        # Legacy Mac code pages tie with their Windows cousins on mostly-lowercase text
        # (cp1251 vs mac_cyrillic differ on capitals); prefer a code page still in use.
        best = next(
            (
                m
                for m in matches
                if not m.encoding.startswith("mac_") and m.chaos <= best.chaos + MAC_TOLERANCE
            ),
            best,
        )
    text = str(best)
    if "\x00" in text:
        raise _undecodable(name)
    return text, best.encoding


def read(path: Path, name: str) -> tuple[str, str]:
    return decode(path.read_bytes(), name)


def _undecodable(name: str) -> Exception:
    if Path(name).suffix.lower() in TEXT_SUFFIXES:
        return unsupported(
            name,
            f"Cannot tell the text encoding of {name}. Save it as UTF-8 and attach it again.",
            reason="unknown_encoding",
        )
    return unsupported(
        name, f"{name} is not a file type the assistant can read.", reason="unknown_type"
    )
