"""Each supported format is read into text the model can use: page markers and tables from
PDF, every sheet from XLSX, encoding and dialect from CSV, pretty JSON, described images."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from PIL import Image

from agent.documents import Kind, Limits, parse
from tests.agent.documents import samples

LIMITS = Limits()


def test_a_pdf_gives_its_prose_and_its_table_rows_under_page_markers(tmp_path: Path):
    doc = parse(samples.pdf_with_table(tmp_path / "risks.pdf"), limits=LIMITS)
    assert doc.kind is Kind.pdf and doc.content_type == "application/pdf"
    lines = doc.text.splitlines()
    assert lines[0] == "--- page 1 of 1 ---"
    assert samples.PDF_PHRASE + "." in lines
    assert "Supplier delay | Ops | " + samples.PDF_CELL in lines
    # table cells are not repeated in the prose above the table
    assert sum(samples.PDF_CELL in line for line in lines) == 1
    assert not doc.truncated and doc.notices == ()


def test_a_pdf_with_many_pages_marks_each_page(tmp_path: Path):
    from reportlab.pdfgen import canvas

    path = tmp_path / "pages.pdf"
    pdf = canvas.Canvas(str(path))
    for number in range(1, 4):
        pdf.drawString(72, 800, f"content of page {number}")
        pdf.showPage()
    pdf.save()
    text = parse(path, limits=LIMITS).text
    assert text.index("--- page 2 of 3 ---") < text.index("content of page 2")
    assert "--- page 3 of 3 ---\ncontent of page 3" in text


def test_an_xlsx_shows_every_sheet_with_cached_values_not_formulas(tmp_path: Path):
    doc = parse(samples.xlsx_multi_sheet(tmp_path / "book.xlsx"), limits=LIMITS)
    assert doc.kind is Kind.xlsx
    assert '## Sheet "Revenue" (4 rows x 3 columns)' in doc.text
    assert '## Sheet "Risks" (2 rows x 2 columns)' in doc.text
    assert "Northwind | Q7-REVENUE-918 | 1200" in doc.text
    assert "Vendor lock-in | high" in doc.text
    assert "=SUM" not in doc.text  # data_only: a formula is never shown as its source


def test_a_cp1251_csv_is_decoded_and_its_semicolons_split_columns(tmp_path: Path):
    doc = parse(samples.csv_file(tmp_path / "sales.csv", "cp1251"), limits=LIMITS)
    assert doc.kind is Kind.csv
    assert "encoding cp1251, delimiter ';'" in doc.text
    assert f"Город | {samples.CSV_WORD} | Комментарий" in doc.text
    assert f"{samples.CSV_CITY} | 95 | Риск снижения спроса осенью" in doc.text


def test_cp1251_with_few_capitals_is_not_mistaken_for_mac_cyrillic(tmp_path: Path):
    path = tmp_path / "orders.csv"
    rows = "".join(f"{i};Москва;{i * 37};заказ {i:08x}\n" for i in range(2000))
    path.write_bytes(("id;город;сумма;комментарий\n" + rows).encode("cp1251"))
    doc = parse(path, limits=LIMITS)
    assert "encoding cp1251" in doc.text
    assert "1 | Москва | 37 | заказ 00000001" in doc.text


def test_a_utf8_csv_with_commas_is_read_as_is(tmp_path: Path):
    doc = parse(samples.csv_file(tmp_path / "sales.csv", "utf-8", ","), limits=LIMITS)
    assert "CSV sales.csv: 5 rows x 3 columns (encoding utf-8, delimiter ',')" in doc.text
    assert f"{samples.CSV_CITY} | 95" in doc.text


def test_a_csv_is_recognised_by_its_content_even_without_a_csv_name(tmp_path: Path):
    path = samples.csv_file(tmp_path / "export.txt", "utf-8", "\t")
    doc = parse(path, limits=LIMITS)
    assert doc.kind is Kind.csv and "delimiter '\\t'" in doc.text


def test_nested_json_is_pretty_printed_down_to_the_leaf(tmp_path: Path):
    doc = parse(samples.nested_json(tmp_path / "report.json"), limits=LIMITS)
    assert doc.kind is Kind.json
    assert f'"leaf": "{samples.JSON_LEAF}"' in doc.text
    assert '\n  "owner": "ops"' in doc.text  # indented, one key per line


def test_a_json_file_is_recognised_by_content_whatever_its_name(tmp_path: Path):
    path = tmp_path / "data.bin"
    path.write_text(json.dumps({"k": "v"}), encoding="utf-8")
    assert parse(path, limits=LIMITS).kind is Kind.json


def test_an_image_for_a_text_only_model_is_described_with_a_notice(tmp_path: Path):
    doc = parse(samples.png(tmp_path / "chart.png"), limits=LIMITS)
    assert doc.kind is Kind.png and doc.image is None
    assert doc.text.startswith("[image chart.png: 64x48 PNG]")
    (notice,) = doc.notices
    assert notice.code == "IMAGE_NOT_SUPPORTED" and "chart.png" in notice.message


def test_an_image_for_a_vision_model_becomes_a_data_url_of_the_same_bytes(tmp_path: Path):
    path = samples.jpeg(tmp_path / "photo.jpg")
    doc = parse(path, limits=Limits(accept_images=True))
    assert doc.kind is Kind.jpeg and doc.notices == ()
    assert doc.image is not None
    prefix = "data:image/jpeg;base64,"
    assert doc.image.data_url.startswith(prefix)
    assert base64.b64decode(doc.image.data_url[len(prefix) :]) == path.read_bytes()


def test_a_large_image_is_downscaled_before_it_is_sent(tmp_path: Path):
    path = samples.png(tmp_path / "wide.png", size=(3000, 1000))
    doc = parse(path, limits=Limits(accept_images=True, image_max_edge=600))
    assert doc.image is not None and (doc.image.width, doc.image.height) == (600, 200)
    raw = base64.b64decode(doc.image.data_url.split(",", 1)[1])
    assert Image.open(io.BytesIO(raw)).size == (600, 200)
    assert doc.text == "[image wide.png: 3000x1000 PNG]"


def test_the_hash_and_size_are_those_of_the_file_on_disk(tmp_path: Path):
    import hashlib

    path = samples.csv_file(tmp_path / "s.csv", "utf-8")
    doc = parse(path, limits=LIMITS)
    assert doc.size == path.stat().st_size
    assert doc.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
