"""Build the test files: every fixture is made here from code, none is checked in."""

from __future__ import annotations

import io
import json
import random
import zipfile
from pathlib import Path

import openpyxl
from PIL import Image
from reportlab.lib import colors, pdfencrypt
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

PDF_PHRASE = "Supplier delay threatens the Q3 launch"
PDF_CELL = "ZX-4471"
XLSX_CELLS = ("Northwind", "Q7-REVENUE-918", "Vendor lock-in")
CSV_WORD = "Выручка"
CSV_CITY = "Санкт-Петербург"
JSON_LEAF = "deep-leaf-value-5531"

CSV_ROWS = [
    ["Город", CSV_WORD, "Комментарий"],
    ["Москва", "120", "Рост продаж в регионе"],
    [CSV_CITY, "95", "Риск снижения спроса осенью"],
    ["Казань", "40", "Новый крупный клиент"],
    ["Новосибирск", "33", "Задержка поставок оборудования"],
]


def pdf_with_table(path: Path, *, encrypt: str | None = None) -> Path:
    """Two pages: prose with a risk statement, then a ruled table."""
    styles = getSampleStyleSheet()
    table = Table(
        [["Risk", "Owner", "Code"], ["Supplier delay", "Ops", PDF_CELL], ["FX", "Finance", "FX-2"]]
    )
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    story = [
        Paragraph("Quarterly risk report", styles["Title"]),
        Paragraph(PDF_PHRASE + ".", styles["Normal"]),
        Spacer(1, 24),
        table,
    ]
    kwargs = {"encrypt": pdfencrypt.StandardEncryption(encrypt, "owner")} if encrypt else {}
    SimpleDocTemplate(str(path), pagesize=A4, **kwargs).build(story)
    return path


def corrupt_pdf(path: Path) -> Path:
    path.write_bytes(b"%PDF-1.4\n1 0 obj<<garbage>>\n%%EOF\n" + b"\x00" * 64)
    return path


def xlsx_multi_sheet(path: Path) -> Path:
    book = openpyxl.Workbook()
    revenue = book.active
    assert revenue is not None
    revenue.title = "Revenue"
    revenue.append(["Customer", "Code", "Amount"])
    revenue.append([XLSX_CELLS[0], XLSX_CELLS[1], 1200])
    revenue.append(["Contoso", "Q7-REVENUE-919", 800])
    revenue.append(["Total", "", "=SUM(C2:C3)"])
    risks = book.create_sheet("Risks")
    risks.append(["Risk", "Level"])
    risks.append([XLSX_CELLS[2], "high"])
    book.save(path)
    return path


def xlsx_rows(path: Path, rows: int, cols: int = 8) -> Path:
    """A single large sheet written in streaming mode."""
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Data")
    sheet.append([f"col{c}" for c in range(cols)])
    for r in range(rows):
        sheet.append([f"r{r}c{c}-{r * 7919 % 1000003}" for c in range(cols)])
    book.save(path)
    return path


def xlsx_zip_bomb(path: Path, *, inflated: int = 5 * 1024 * 1024) -> Path:
    """A workbook-shaped zip whose sheet inflates ~1000:1."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
        archive.writestr("xl/worksheets/sheet1.xml", b" " * inflated)
    return path


def csv_file(path: Path, encoding: str, delimiter: str = ";") -> Path:
    text = "\n".join(delimiter.join(row) for row in CSV_ROWS) + "\n"
    path.write_bytes(text.encode(encoding))
    return path


def undecodable_csv(path: Path) -> Path:
    """High bytes no single encoding explains, shaped like CSV."""
    rng = random.Random(7)
    rows = [b",".join(bytes(rng.randrange(0x80, 0x100) for _ in range(6)) for _ in range(4))]
    path.write_bytes(b"\n".join(rows * 80))
    return path


def nested_json(path: Path) -> Path:
    value: dict[str, object] = {"leaf": JSON_LEAF}
    for level in range(5):
        value = {f"level{level}": value, "items": [1, 2, 3]}
    path.write_text(json.dumps({"report": value, "owner": "ops"}), encoding="utf-8")
    return path


def png(path: Path, size: tuple[int, int] = (64, 48)) -> Path:
    Image.new("RGB", size, (200, 30, 30)).save(path, format="PNG")
    return path


def jpeg(path: Path, size: tuple[int, int] = (64, 48)) -> Path:
    Image.new("RGB", size, (30, 30, 200)).save(path, format="JPEG")
    return path


def renamed_exe(path: Path) -> Path:
    """A Windows executable header under an innocent name."""
    header = bytearray(b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00")
    path.write_bytes(bytes(header) + b"\x00" * 48 + b"PE\x00\x00" + b"\x00" * 512)
    return path


def zip_archive(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "hello")
    return path


def sized(path: Path, size: int) -> Path:
    """A valid CSV of exactly `size` bytes."""
    line = b"id,value\n"
    body = io.BytesIO()
    body.write(line)
    row = b"1,abcdefghijklmnopqrstuvwxyz0123456789\n"
    while body.tell() + len(row) <= size:
        body.write(row)
    body.write(b"x" * (size - body.tell()))
    path.write_bytes(body.getvalue())
    return path
