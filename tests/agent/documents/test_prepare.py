"""One turn's files: checked and parsed before anything happens, fitted into a token cap with
a notice for each cut, and turned into the user message content and the backend records."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.config import AgentSettings, LlmSettings, Settings
from agent.documents import DocumentError, prepare_attachments
from agent.documents.injection import estimate_tokens, shares, token_cap
from tests.agent.documents import samples


def settings(**agent: object) -> Settings:
    images = bool(agent.pop("images", False))
    return Settings(
        agent=AgentSettings(**agent),  # type: ignore[arg-type]
        llm=LlmSettings(max_input_tokens=4000, supports_images=images),
    )


async def test_no_files_leave_the_message_text_unchanged():
    prepared = await prepare_attachments([], settings())
    assert prepared.content("hello") == "hello"
    assert prepared.notices == () and prepared.records() == []


async def test_files_become_attachment_blocks_after_the_users_text(tmp_path: Path):
    pdf = samples.pdf_with_table(tmp_path / "risks.pdf")
    csv = samples.csv_file(tmp_path / "sales.csv", "cp1251")
    prepared = await prepare_attachments([str(pdf), {"path": str(csv)}], settings(), root=tmp_path)
    content = prepared.content("выдели риски")
    assert isinstance(content, str)
    assert content.startswith('выдели риски\n\n<attachment name="risks.pdf" type="application/pdf"')
    assert samples.PDF_CELL in content and samples.CSV_CITY in content
    assert content.count("</attachment>") == 2
    assert "not instructions" in content
    assert prepared.notices == ()


async def test_the_records_carry_name_type_size_hash_and_the_extracted_text(tmp_path: Path):
    path = samples.xlsx_multi_sheet(tmp_path / "book.xlsx")
    prepared = await prepare_attachments([path], settings(), root=tmp_path)
    (record,) = prepared.records()
    assert record["name"] == "book.xlsx"
    assert record["content_type"].endswith("spreadsheetml.sheet")
    assert record["size"] == path.stat().st_size and len(record["sha256"]) == 64
    assert "Vendor lock-in | high" in record["extracted_text"]
    assert prepared.metadata() == [{k: v for k, v in record.items() if k != "extracted_text"}]


async def test_text_past_the_token_cap_is_cut_and_a_notice_says_so(tmp_path: Path):
    path = tmp_path / "long.csv"
    path.write_text("id,v\n" + "".join(f"{i},value-{i}\n" for i in range(400)), encoding="utf-8")
    prepared = await prepare_attachments([path], settings(max_attachment_tokens=300), root=tmp_path)
    content = prepared.content("q")
    assert isinstance(content, str)
    assert estimate_tokens(content) <= 300
    assert "value-5" in content and "value-399" not in content
    assert "[... cut here:" in content
    (notice,) = prepared.notices
    assert notice.code == "ATTACHMENT_TRUNCATED" and "long.csv" in notice.message
    assert "300 tokens" in notice.message
    assert "value-399" in prepared.records()[0]["extracted_text"]  # the record keeps it all


async def test_a_small_file_keeps_all_its_text_next_to_a_large_one(tmp_path: Path):
    big = tmp_path / "big.csv"
    big.write_text("id,v\n" + "".join(f"{i},x{i}\n" for i in range(3000)), encoding="utf-8")
    small = samples.csv_file(tmp_path / "small.csv", "utf-8", ",")
    prepared = await prepare_attachments(
        [big, small], settings(max_attachment_tokens=1000), root=tmp_path
    )
    content = prepared.content("")
    assert isinstance(content, str)
    assert "Новосибирск | 33 | Задержка поставок оборудования" in content
    assert [n.message.split(" reached")[0] for n in prepared.notices] == ["Only part of big.csv"]


def test_shares_give_small_texts_everything_and_split_the_rest():
    assert shares([100, 5000, 5000], 3100) == [100, 1500, 1500]
    assert shares([10, 20], 1000) == [10, 20]


def test_the_cap_never_exceeds_half_the_models_input_budget():
    assert token_cap(settings(max_attachment_tokens=50_000)) == 2000
    assert token_cap(settings(max_attachment_tokens=500)) == 500


async def test_more_files_than_allowed_are_refused_before_any_is_read(tmp_path: Path):
    paths = [samples.renamed_exe(tmp_path / f"f{i}.pdf") for i in range(3)]
    with pytest.raises(DocumentError) as caught:
        await prepare_attachments(paths, settings(max_files=2), root=tmp_path)
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.details == {"max_files": 2, "count": 3}


async def test_sizes_are_checked_for_every_file_before_any_is_parsed(tmp_path: Path):
    bad_type = samples.renamed_exe(tmp_path / "first.pdf")
    too_big = samples.sized(tmp_path / "second.csv", 2001)
    with pytest.raises(DocumentError) as caught:
        await prepare_attachments([bad_type, too_big], settings(max_file_bytes=2000), root=tmp_path)
    assert caught.value.code == "FILE_TOO_LARGE"
    assert caught.value.details["name"] == "second.csv"


async def test_an_image_for_a_vision_model_is_an_image_part_beside_the_text(tmp_path: Path):
    path = samples.png(tmp_path / "chart.png")
    prepared = await prepare_attachments([path], settings(images=True), root=tmp_path)
    content = prepared.content("what is this?")
    assert isinstance(content, list)
    text, image = content
    assert isinstance(text, dict) and text["type"] == "text"
    assert "[image chart.png: 64x48 PNG]" in text["text"]
    assert isinstance(image, dict) and image["type"] == "image_url"
    assert image["image_url"]["url"].startswith("data:image/png;base64,")
    assert prepared.notices == ()


async def test_an_image_for_a_text_model_is_described_with_a_notice(tmp_path: Path):
    prepared = await prepare_attachments(
        [samples.png(tmp_path / "c.png")], settings(), root=tmp_path
    )
    assert isinstance(prepared.content("x"), str)
    assert [n.code for n in prepared.notices] == ["IMAGE_NOT_SUPPORTED"]


async def test_a_gradio_file_dict_keeps_its_original_name(tmp_path: Path):
    path = samples.csv_file(tmp_path / "tmpab12.csv", "utf-8", ",")
    prepared = await prepare_attachments(
        [{"path": str(path), "orig_name": "Sales Q3.csv"}], settings(), root=tmp_path
    )
    assert prepared.metadata()[0]["name"] == "Sales Q3.csv"
