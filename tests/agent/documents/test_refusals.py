"""Files the agent must not read are refused with a clear error and the stream error code:
wrong types (by content, not name), damaged or encrypted files, bombs, unknown encodings."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.documents import SUPPORTED_FORMATS, DocumentError, Limits, parse
from agent.documents.reader import check_size
from tests.agent.documents import samples

LIMITS = Limits()


def refusal(path: Path, limits: Limits = LIMITS) -> DocumentError:
    with pytest.raises(DocumentError) as caught:
        parse(path, limits=limits)
    return caught.value


def test_an_executable_renamed_to_pdf_is_refused_by_its_content(tmp_path: Path):
    error = refusal(samples.renamed_exe(tmp_path / "report.pdf"))
    assert error.code == "UNSUPPORTED_FILE"
    assert error.details["reason"] == "unsupported_type"
    assert error.details["detected"] == "application/x-msdownload"
    assert error.details["supported"] == list(SUPPORTED_FORMATS)
    assert "PDF, XLSX, CSV, JSON, PNG, JPEG" in error.message


def test_a_zip_archive_is_refused_with_the_supported_formats(tmp_path: Path):
    error = refusal(samples.zip_archive(tmp_path / "bundle.zip"))
    assert (error.code, error.details["reason"]) == ("UNSUPPORTED_FILE", "archive")
    assert "archive" in error.message and "Supported formats" in error.message


def test_a_password_protected_pdf_says_so(tmp_path: Path):
    error = refusal(samples.pdf_with_table(tmp_path / "locked.pdf", encrypt="s3cret"))
    assert (error.code, error.details["reason"]) == ("UNSUPPORTED_FILE", "encrypted")
    assert (
        error.message
        == "locked.pdf is password-protected. Remove the password and attach it again."
    )


def test_a_corrupt_pdf_says_it_is_damaged(tmp_path: Path):
    error = refusal(samples.corrupt_pdf(tmp_path / "broken.pdf"))
    assert (error.code, error.details["reason"]) == ("UNSUPPORTED_FILE", "corrupt")
    assert "broken.pdf is damaged" in error.message


def test_a_truncated_pdf_says_it_is_damaged(tmp_path: Path):
    whole = samples.pdf_with_table(tmp_path / "whole.pdf").read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(whole[:300])
    assert refusal(cut).details["reason"] == "corrupt"


def test_an_xlsx_zip_bomb_is_refused_before_openpyxl_inflates_it(tmp_path: Path):
    error = refusal(samples.xlsx_zip_bomb(tmp_path / "bomb.xlsx"))
    assert (error.code, error.details["reason"]) == ("FILE_TOO_LARGE", "zip_bomb")
    assert error.details["ratio"] > 200
    assert "zip bomb" in error.message


def test_an_xlsx_that_unpacks_past_the_limit_is_refused_with_the_limit(tmp_path: Path):
    path = samples.xlsx_rows(tmp_path / "big.xlsx", rows=2000)
    error = refusal(path, Limits(max_unzipped_bytes=100_000))
    assert (error.code, error.details["limit"]) == ("FILE_TOO_LARGE", 100_000)
    assert error.details["unpacked_bytes"] > 100_000


def test_a_damaged_xlsx_says_so(tmp_path: Path):
    path = tmp_path / "broken.xlsx"
    path.write_bytes(samples.xlsx_multi_sheet(tmp_path / "ok.xlsx").read_bytes()[:-200])
    assert refusal(path).details["reason"] == "corrupt"


def test_a_csv_in_an_unknown_encoding_asks_for_utf8(tmp_path: Path):
    error = refusal(samples.undecodable_csv(tmp_path / "mystery.csv"))
    assert (error.code, error.details["reason"]) == ("UNSUPPORTED_FILE", "unknown_encoding")
    assert "Save it as UTF-8" in error.message


def test_invalid_json_names_the_line_and_column(tmp_path: Path):
    path = tmp_path / "bad.json"
    path.write_text('{"a": 1,\n "b": }', encoding="utf-8")
    error = refusal(path)
    assert error.details["reason"] == "invalid_json"
    assert "line 2, column 7" in error.message


def test_json_nested_beyond_the_parsers_recursion_is_refused(tmp_path: Path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    assert refusal(path).details["reason"] == "too_deep"


def test_plain_prose_is_not_taken_for_a_table(tmp_path: Path):
    path = tmp_path / "notes.txt"
    prose = "Dear team,\nthe numbers look fine, mostly, except March.\nThanks\nAnn\n"
    path.write_text(prose, encoding="utf-8")
    error = refusal(path)
    assert (error.code, error.details["reason"]) == ("UNSUPPORTED_FILE", "unsupported_type")


def test_an_empty_file_is_refused(tmp_path: Path):
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    assert refusal(path).details["reason"] == "empty"


def test_a_damaged_png_says_so(tmp_path: Path):
    path = tmp_path / "broken.png"
    path.write_bytes(samples.png(tmp_path / "ok.png").read_bytes()[:40])
    assert refusal(path).details["reason"] == "corrupt"


def test_an_image_with_too_many_pixels_is_refused_before_decoding(tmp_path: Path):
    path = samples.png(tmp_path / "huge.png", size=(400, 300))
    error = refusal(path, Limits(max_image_pixels=100_000))
    assert (error.code, error.details["reason"], error.details["unit"]) == (
        "FILE_TOO_LARGE",
        "too_many_pixels",
        "pixels",
    )


def test_exactly_the_size_limit_passes_and_one_byte_more_is_refused(tmp_path: Path):
    limit = 10 * 1024 * 1024
    at_limit = samples.sized(tmp_path / "at.csv", limit)
    over = samples.sized(tmp_path / "over.csv", limit + 1)
    assert check_size(at_limit, "at.csv", Limits()) == limit
    with pytest.raises(DocumentError) as caught:
        check_size(over, "over.csv", Limits())
    assert caught.value.code == "FILE_TOO_LARGE"
    assert caught.value.details == {
        "name": "over.csv",
        "reason": "file_size",
        "limit": limit,
        "unit": "bytes",
        "size": limit + 1,
    }
