"""CSV: encoding and dialect detected, rendered as a bounded `a | b | c` table."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from agent.documents import text
from agent.documents.base import Extract, Limits, TextSink, table_row, unsupported

SNIFF_CHARS = 64 * 1024
DELIMITERS = ",;\t|"
_TABLE_SUFFIXES = (".csv", ".tsv")


def parse(path: Path, *, name: str, limits: Limits) -> Extract:
    """The table's first `max_rows` rows under a header line saying how many there are."""
    content, encoding = text.read(path, name)
    dialect = _dialect(content, name)
    sink = TextSink(limits.max_chars)
    total, widest = 0, 0
    try:
        for row in csv.reader(io.StringIO(content, newline=""), dialect):
            if not any(field.strip() for field in row):
                continue
            total += 1
            widest = max(widest, len(row))
            if total <= limits.max_rows:
                sink.add(table_row(row, limits))
    except csv.Error as exc:
        raise unsupported(
            name, f"{name} is not a readable CSV file ({exc}).", reason="corrupt"
        ) from None
    header = (
        f"CSV {name}: {total} rows x {widest} columns "
        f"(encoding {encoding}, delimiter {dialect.delimiter!r})"
    )
    lines = [header, sink.text()]
    cut = total > limits.max_rows or sink.truncated
    if cut:
        lines.append(f"[only the first {len(sink.lines)} of {total} rows are shown]")
    return Extract(text="\n".join(lines), truncated=cut)


def _dialect(content: str, name: str) -> type[csv.Dialect] | csv.Dialect:
    sample = content[:SNIFF_CHARS]
    suffix = Path(name).suffix.lower()
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=DELIMITERS)
    except csv.Error:
        if suffix in _TABLE_SUFFIXES:
            return csv.excel_tab if suffix == ".tsv" else csv.excel
        raise _not_a_table(name) from None
    if suffix not in _TABLE_SUFFIXES and not _consistent(sample, dialect):
        raise _not_a_table(name)
    return dialect


def _consistent(sample: str, dialect: type[csv.Dialect] | csv.Dialect) -> bool:
    """Without a .csv name, accept only text whose first lines split into the same >1 columns."""
    lines = sample.splitlines()[:20]
    if len(lines) > 1:
        lines = lines[:-1]  # the sample may end mid-line
    widths = {len(row) for row in csv.reader(lines, dialect) if row}
    return len(widths) == 1 and widths.pop() > 1


def _not_a_table(name: str) -> Exception:
    return unsupported(
        name,
        f"{name} is plain text, not a table; the assistant reads CSV, not other text files.",
        reason="unsupported_type",
    )
