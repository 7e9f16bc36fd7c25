"""Big inputs stay bounded: rows, sheets, pages, JSON depth and width, and the text kept,
with the cut said in the text itself."""

from __future__ import annotations

import json
from pathlib import Path

from reportlab.pdfgen import canvas

from agent.documents import Limits, parse
from tests.agent.documents import samples


def test_a_long_csv_shows_the_first_rows_and_says_how_many_there_are(tmp_path: Path):
    path = tmp_path / "long.csv"
    path.write_text("id,v\n" + "".join(f"{i},x{i}\n" for i in range(2000)), encoding="utf-8")
    doc = parse(path, limits=Limits(max_rows=10))
    assert doc.truncated
    assert "2001 rows x 2 columns" in doc.text
    assert "8,x8" not in doc.text and "8 | x8" in doc.text and "9 | x9" not in doc.text
    assert doc.text.endswith("[only the first 10 of 2001 rows are shown]")


def test_a_long_sheet_is_cut_at_the_row_limit_and_says_its_size(tmp_path: Path):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for r in range(300):
        sheet.append([f"r{r}c{c}" for c in range(3)])
    path = tmp_path / "rows.xlsx"
    book.save(path)
    doc = parse(path, limits=Limits(max_rows=20))
    assert doc.truncated
    assert '## Sheet "Sheet" (300 rows x 3 columns)' in doc.text
    assert "r19c0" in doc.text and "r20c0" not in doc.text
    assert "[only the first 20 rows of this sheet are shown]" in doc.text


def test_a_sheet_without_recorded_dimensions_is_still_read_and_cut(tmp_path: Path):
    path = samples.xlsx_rows(tmp_path / "rows.xlsx", rows=300, cols=3)
    doc = parse(path, limits=Limits(max_rows=20))
    assert doc.truncated
    assert '## Sheet "Data" (size not recorded in the file)' in doc.text
    assert "r18c0" in doc.text and "r19c0" not in doc.text
    assert "[only the first 20 rows of this sheet are shown]" in doc.text


def test_wide_cells_and_rows_are_cut(tmp_path: Path):
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(80)) + "\n" + ",".join(["y" * 500] * 80) + "\n")
    doc = parse(path, limits=Limits(max_cols=5, max_cell_chars=20))
    header, row = doc.text.splitlines()[1:3]
    assert header == "c0 | c1 | c2 | c3 | c4"
    assert row == " | ".join(["y" * 19 + "…"] * 5)


def test_a_pdf_past_the_text_budget_stops_reading_and_names_the_pages_read(tmp_path: Path):
    path = tmp_path / "book.pdf"
    pdf = canvas.Canvas(str(path))
    for number in range(1, 41):
        for line in range(40):
            pdf.drawString(40, 800 - line * 18, f"page {number} line {line} " + "lorem ipsum " * 4)
        pdf.showPage()
    pdf.save()
    doc = parse(path, limits=Limits(max_chars=20_000))
    assert doc.truncated
    assert len(doc.text) < 20_200
    last = doc.text.splitlines()[-1]
    assert last.startswith("[only pages 1-") and last.endswith(" of 40 were read]")
    assert "--- page 40 of 40 ---" not in doc.text


def test_json_deeper_or_wider_than_the_limits_is_summarised(tmp_path: Path):
    value: object = "bottom"
    for _ in range(30):
        value = {"down": value}
    path = tmp_path / "shape.json"
    path.write_text(json.dumps({"deep": value, "wide": list(range(1000))}), encoding="utf-8")
    doc = parse(path, limits=Limits(max_json_depth=5, max_json_items=10))
    assert doc.truncated
    assert "bottom" not in doc.text
    assert '"… (dict of 1 nested deeper)"' in doc.text
    assert '"… 990 more items"' in doc.text
    assert doc.text.endswith(
        "[the JSON was shortened: deep levels, long lists or the tail are omitted]"
    )


def test_only_the_first_sheets_are_read_when_a_workbook_has_many(tmp_path: Path):
    import openpyxl

    book = openpyxl.Workbook()
    for index in range(6):
        sheet = book.create_sheet(f"S{index}")
        sheet.append([f"value-{index}"])
    path = tmp_path / "many.xlsx"
    book.save(path)
    doc = parse(path, limits=Limits(max_sheets=3))
    assert doc.truncated
    assert "value-1" in doc.text and "value-2" not in doc.text  # the default "Sheet" comes first
    assert "[only the first 3 of 7 sheets are shown]" in doc.text
