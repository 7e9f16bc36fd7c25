"""Files through the real `/chat` endpoint (Story 6, FR-021): each supported format reaches the
model as context for the turn; bad files end the turn with their error before any model call
and leave nothing behind; the size limit is the server's; the attachment is recorded with the
conversation and shown in the history after a reload."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from gradio_client import handle_file

from tests.agent.documents import samples
from tests.agent.support import Chat, Messages, collect, history, of_type
from tests.backend.support import scalar

LIMIT = 10 * 1024 * 1024
SUPPORTED = ["PDF", "XLSX", "CSV", "JSON", "PNG", "JPEG"]


def send_files(
    chat: Chat, token: str, cid: str, text: str, paths: list[Path], *, timeout: float = 90
) -> list[Messages]:
    job = chat.client(token).submit(
        message={"text": text, "files": [handle_file(str(p)) for p in paths]},
        conversation_id=cid,
        action="",
        focus="",
        api_name="/chat",
    )
    return collect(job, timeout=timeout)


def user_content(request: dict[str, Any]) -> str:
    """All the text of the user messages of one recorded model request."""
    parts = []
    for message in request["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
        else:
            parts.append(str(content))
    return "\n".join(parts)


def the_error(outputs: list[Messages]) -> dict[str, Any]:
    (error,) = of_type(outputs[-1], "error")
    return dict(error["metadata"])


BUILD: dict[str, tuple[Callable[[Path], Path], str, list[str]]] = {
    "pdf": (samples.pdf_with_table, "risks.pdf", [samples.PDF_PHRASE, samples.PDF_CELL]),
    "xlsx": (samples.xlsx_multi_sheet, "book.xlsx", list(samples.XLSX_CELLS)),
    "csv-cp1251": (
        lambda p: samples.csv_file(p, "cp1251"),
        "sales.csv",
        [samples.CSV_WORD, samples.CSV_CITY],
    ),
    "csv-utf8": (lambda p: samples.csv_file(p, "utf-8", ","), "sales.csv", [samples.CSV_CITY]),
    "json": (samples.nested_json, "report.json", [samples.JSON_LEAF]),
    "png": (samples.png, "chart.png", ["[image chart.png: 64x48 PNG]"]),
    "jpeg": (samples.jpeg, "photo.jpg", ["[image photo.jpg: 64x48 JPEG]"]),
}


@pytest.mark.parametrize("kind", list(BUILD))
def test_each_supported_file_reaches_the_model_with_its_content(
    kind, chat, tokens, conversation, fake_llm, tmp_path
):
    build, name, expected = BUILD[kind]
    path = build(tmp_path / name)
    cid = conversation("viewer")
    fake_llm.enqueue({"text": "Here is what I found."})

    outputs = send_files(chat, tokens["viewer"], cid, "выдели риски", [path])

    assert of_type(outputs[-1], "error") == []
    (request,) = fake_llm.requests
    seen = user_content(request)
    assert seen.startswith("выдели риски")
    for value in expected:
        assert value in seen, (value, seen[:2000])
    if kind in ("png", "jpeg"):
        (notice,) = of_type(outputs[-1], "notice")
        assert notice["metadata"]["code"] == "IMAGE_NOT_SUPPORTED"


BAD: dict[str, tuple[Callable[[Path], Path], str, str, str]] = {
    "renamed-exe": (samples.renamed_exe, "report.pdf", "UNSUPPORTED_FILE", "unsupported_type"),
    "zip": (samples.zip_archive, "bundle.zip", "UNSUPPORTED_FILE", "archive"),
    "encrypted-pdf": (
        lambda p: samples.pdf_with_table(p, encrypt="pw"),
        "locked.pdf",
        "UNSUPPORTED_FILE",
        "encrypted",
    ),
    "corrupt-pdf": (samples.corrupt_pdf, "broken.pdf", "UNSUPPORTED_FILE", "corrupt"),
    "zip-bomb": (samples.xlsx_zip_bomb, "bomb.xlsx", "FILE_TOO_LARGE", "zip_bomb"),
    "unknown-encoding": (
        samples.undecodable_csv,
        "mystery.csv",
        "UNSUPPORTED_FILE",
        "unknown_encoding",
    ),
}


@pytest.mark.parametrize("kind", list(BAD))
def test_a_bad_file_ends_the_turn_with_its_error_before_any_model_call(
    kind, chat, api, sql, tokens, conversation, fake_llm, tmp_path
):
    build, name, code, reason = BAD[kind]
    cid = conversation("viewer")

    outputs = send_files(chat, tokens["viewer"], cid, "analyse", [build(tmp_path / name)])

    error = the_error(outputs)
    assert (error["code"], error["details"]["reason"], error["details"]["name"]) == (
        code,
        reason,
        name,
    )
    assert name in error["message"]
    if code == "UNSUPPORTED_FILE":
        assert error["details"]["supported"] == SUPPORTED
    assert fake_llm.requests == []
    # nothing half-written: no message, no attachment row, no checkpoint
    assert history(api, tokens["viewer"], cid) == []
    assert (
        scalar(sql, "SELECT count(*) FROM agent_attachments WHERE conversation_id = %s", cid) == 0
    )
    assert scalar(sql, "SELECT count(*) FROM checkpoints WHERE thread_id = %s", cid) == 0


def test_an_unsupported_type_names_the_supported_formats_in_its_message(
    chat, tokens, conversation, fake_llm, tmp_path
):
    cid = conversation("viewer")
    outputs = send_files(
        chat, tokens["viewer"], cid, "x", [samples.zip_archive(tmp_path / "a.zip")]
    )
    assert "Supported formats: PDF, XLSX, CSV, JSON, PNG, JPEG." in the_error(outputs)["message"]


def test_ten_megabytes_pass_and_one_byte_more_is_refused_by_the_server(
    chat, tokens, conversation, fake_llm, tmp_path
):
    at_limit = samples.sized(tmp_path / "at-limit.csv", LIMIT)
    over = samples.sized(tmp_path / "over-limit.csv", LIMIT + 1)
    fake_llm.enqueue({"text": "Read it."})

    passed = send_files(chat, tokens["viewer"], conversation("viewer"), "read", [at_limit])

    assert of_type(passed[-1], "error") == []
    assert "abcdefghijklmnopqrstuvwxyz0123456789" in user_content(fake_llm.requests[0])
    (notice,) = of_type(passed[-1], "notice")
    assert (
        notice["metadata"]["code"] == "ATTACHMENT_TRUNCATED" and "at-limit.csv" in notice["content"]
    )

    refused = send_files(chat, tokens["viewer"], conversation("viewer"), "read", [over])

    error = the_error(refused)
    assert error["code"] == "FILE_TOO_LARGE", error
    assert (error["details"]["limit"], error["details"]["size"]) == (LIMIT, LIMIT + 1)
    assert len(fake_llm.requests) == 1  # no model call for the refused file


def test_an_upload_far_past_the_limit_is_refused_by_the_upload_route_itself(
    agent_url, chat, tokens, conversation, fake_llm, tmp_path
):
    huge = samples.sized(tmp_path / "huge.csv", LIMIT + 3 * 1024 * 1024)
    with huge.open("rb") as f:
        response = httpx.post(
            agent_url + "/api/agent/gradio/gradio_api/upload",
            files={"files": ("huge.csv", f, "text/csv")},
            headers={"Authorization": f"Bearer {tokens['viewer']}"},
            timeout=60,
        )
    assert response.status_code == 413, response.text
    assert "maximum allowed size" in response.text
    # the Gradio client reads the same limit from the app's config and does not even upload
    with pytest.raises(ValueError, match="exceeds the maximum file size"):
        send_files(chat, tokens["viewer"], conversation("viewer"), "read", [huge])
    assert fake_llm.requests == []


def test_more_files_than_allowed_are_refused(chat, tokens, conversation, fake_llm, tmp_path):
    paths = [samples.csv_file(tmp_path / f"s{i}.csv", "utf-8", ",") for i in range(6)]
    outputs = send_files(chat, tokens["viewer"], conversation("viewer"), "read", paths)
    error = the_error(outputs)
    assert (error["code"], error["details"]["max_files"]) == ("INVALID_INPUT", 5)
    assert fake_llm.requests == []


def test_the_attachment_is_recorded_and_the_history_lists_it_after_a_reload(
    chat, api, sql, tokens, conversation, fake_llm, tmp_path
):
    path = samples.csv_file(tmp_path / "sales.csv", "cp1251")
    cid = conversation("viewer")
    fake_llm.enqueue({"text": "Noted."})

    send_files(chat, tokens["viewer"], cid, "keep this", [path])

    user, _assistant = history(api, tokens["viewer"], cid)
    assert user["content"] == "keep this"
    (listed,) = user["metadata"]["attachments"]
    assert (listed["name"], listed["content_type"], listed["size"]) == (
        "sales.csv",
        "text/csv",
        path.stat().st_size,
    )
    headers = {"Authorization": f"Bearer {tokens['viewer']}"}
    rows = api.get(f"/api/assistant/conversations/{cid}/attachments", headers=headers).json()
    (row,) = rows["items"]
    assert (row["message_id"], row["sha256"]) == (user["id"], listed["sha256"])
    text = scalar(sql, "SELECT extracted_text FROM agent_attachments WHERE id = %s", row["id"])
    assert samples.CSV_CITY in text


def test_a_later_turn_still_sees_the_attached_content(
    chat, tokens, conversation, fake_llm, tmp_path
):
    cid = conversation("viewer")
    fake_llm.enqueue({"text": "Got the table."}, {"text": "Kazan had 40."})
    send_files(
        chat,
        tokens["viewer"],
        cid,
        "here is the table",
        [samples.csv_file(tmp_path / "t.csv", "cp1251")],
    )

    chat.send(tokens["viewer"], cid, "and which city had 40?")

    second = fake_llm.requests[1]
    assert "Казань | 40 | Новый крупный клиент" in user_content(second)
    assert user_content(second).endswith("and which city had 40?")
