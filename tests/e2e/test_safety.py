"""What the model says and what a person attaches cannot hurt the page."""

from __future__ import annotations

import zipfile
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Watch, login, open_chat, screenshot, send
from tests.fakes.llm_server import FakeLLM

HOSTILE = (
    'Look: <img src=x onerror="window.__pwned=1;alert(1)"> and '
    "<script>window.__pwned=2;alert(2)</script> and [a link](javascript:alert(3)) done."
)


def test_markup_in_a_model_answer_renders_as_inert_text(
    page: Page, llm: FakeLLM, watch: Watch
) -> None:
    llm.enqueue({"text": HOSTILE})
    login(page)
    open_chat(page)
    send(page, "Show me something")

    answer = page.get_by_test_id("assistant-message")
    expect(answer).to_contain_text("done.")
    expect(answer).to_contain_text('<img src=x onerror="window.__pwned=1;alert(1)">')
    expect(answer).to_contain_text("<script>window.__pwned=2;alert(2)</script>")
    assert answer.locator("img, script").count() == 0
    hrefs = answer.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert all(not (h or "").lower().startswith("javascript:") for h in hrefs), hrefs
    page.wait_for_timeout(300)  # give any handler that slipped through the time to run
    assert page.evaluate("window.__pwned") is None
    assert watch.dialogs == []
    screenshot(page, "inert-markup")


def test_an_unsupported_file_is_refused_with_the_reason(
    page: Page, llm: FakeLLM, tmp_path: Path
) -> None:
    login(page)
    open_chat(page)
    program = tmp_path / "setup.exe"
    program.write_bytes(b"MZ\x90\x00" + b"\x00" * 64)
    page.get_by_test_id("file-input").set_input_files(str(program))

    problems = page.get_by_test_id("file-problems")
    expect(problems).to_contain_text("setup.exe: this file type is not supported")
    expect(problems).to_contain_text("PDF, XLSX, CSV, JSON, PNG, JPEG")
    expect(page.get_by_test_id("attachments")).to_have_count(0)
    screenshot(page, "file-refused-in-browser")

    # A file that passes the browser's check (a .pdf name) but is a ZIP archive: the agent
    # reads its content, refuses it, and its reason is shown.
    fake_pdf = tmp_path / "report.pdf"
    with zipfile.ZipFile(fake_pdf, "w") as archive:
        archive.writestr("inside.txt", "not a PDF")
    page.get_by_test_id("file-input").set_input_files(str(fake_pdf))
    expect(page.get_by_test_id("attachments")).to_contain_text("report.pdf")
    send(page, "Summarise the attached report")
    error = page.get_by_test_id("error")
    expect(error).to_have_attribute("data-code", "UNSUPPORTED_FILE")
    expect(error).to_contain_text("This file type is not supported.")
    expect(error).to_contain_text("Server:")
    expect(error).to_contain_text("report.pdf is a ZIP archive")
    assert llm.requests == []  # refused before the model saw anything
    screenshot(page, "file-refused-by-agent")
