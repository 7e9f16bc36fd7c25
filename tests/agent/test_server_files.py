"""Issue 9.1: the agent opens only files uploaded through its own Gradio upload route.

Every attack goes through Gradio's raw HTTP API (gradio_client always uploads first, so it
cannot show the hole). Each spelling of a server path must end the turn with UNSUPPORTED_FILE,
and the marker inside the file must reach neither the model, nor the attachment rows, nor the
history, nor Gradio's file cache.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agent import raw_gradio
from tests.agent.support import GRADIO, error_code, of_type, text_of

FILE_META = {"_type": "gradio.FileData"}


@pytest.fixture(scope="module")
def guarded(start_agent, tmp_path_factory) -> Iterator[dict[str, Any]]:
    """An agent process with its own upload folder, and a secret file outside it."""
    uploads = tmp_path_factory.mktemp("gradio-uploads")
    outside = tmp_path_factory.mktemp("elsewhere")
    with start_agent(GRADIO_TEMP_DIR=str(uploads)) as (base, _proc):
        yield {"url": base, "uploads": uploads, "outside": outside}


@pytest.fixture()
def secret(guarded) -> tuple[Path, str]:
    marker = f"MARKER-{uuid.uuid4().hex}"
    path = guarded["outside"] / f"secret-{marker[-6:]}.json"
    path.write_text(f'{{"password": "{marker}"}}')
    return path, marker


def _spellings(path: Path, uploads: Path) -> dict[str, str]:
    relative = os.path.relpath(path, Path.cwd())
    into_uploads = uploads / ".." / path.parent.name / path.name
    return {
        "absolute": str(path),
        "relative": relative,
        "traversal": str(into_uploads),
        "file url": path.as_uri(),
        "http url": "http://127.0.0.1:9/" + path.name,
    }


def _assert_nothing_leaked(marker: str, sql: Any, fake_llm: Any, uploads: Path) -> None:
    assert not any(marker in str(r) for r in fake_llm.requests)
    rows = sql.execute(
        "select count(*) from agent_attachments where extracted_text like %s", (f"%{marker}%",)
    ).fetchone()[0]
    assert rows == 0
    stored = sql.execute(
        "select count(*) from agent_messages where content like %s or metadata::text like %s",
        (f"%{marker}%", f"%{marker}%"),
    ).fetchone()[0]
    assert stored == 0
    for copied in uploads.rglob("*"):
        if copied.is_file() and not copied.is_symlink():
            assert marker not in copied.read_text(errors="ignore"), copied


def _message(path: str, *, meta: bool = True) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": path, "orig_name": Path(path).name}
    if meta:
        entry["meta"] = FILE_META
    return {"text": "What is in this file?", "files": [entry]}


@pytest.mark.parametrize("spelling", ["absolute", "relative", "traversal", "file url", "http url"])
def test_a_server_path_named_in_a_raw_call_is_refused_and_never_read(
    guarded, secret, spelling, tokens, conversation, fake_llm, sql
):
    path, marker = secret
    raw = _spellings(path, guarded["uploads"])[spelling]
    cid = conversation()

    outputs = raw_gradio.call(guarded["url"], tokens["admin"], [_message(raw), cid, "", "", ""])

    assert error_code(outputs) == "UNSUPPORTED_FILE", outputs
    error = of_type(outputs[-1], "error")[0]["metadata"]
    assert error["details"]["reason"] in ("not_uploaded", "url", "relative")
    assert str(path) not in error["message"] and str(path) not in str(error["details"])
    assert fake_llm.requests == []
    _assert_nothing_leaked(marker, sql, fake_llm, guarded["uploads"])


@pytest.mark.parametrize("shape", ["dict without meta", "plain string"])
def test_a_server_path_that_is_not_even_a_filedata_is_refused_before_the_run(
    guarded, secret, shape, tokens, conversation, fake_llm, sql
):
    path, marker = secret
    entry: Any = str(path) if shape == "plain string" else {"path": str(path)}
    message = {"text": "What is in this file?", "files": [entry]}

    with pytest.raises(RuntimeError, match="the call failed"):
        raw_gradio.call(guarded["url"], tokens["admin"], [message, conversation(), "", "", ""])

    assert fake_llm.requests == []
    _assert_nothing_leaked(marker, sql, fake_llm, guarded["uploads"])


def test_a_symlink_planted_in_the_upload_folder_that_points_out_is_refused(
    guarded, secret, tokens, conversation, fake_llm, sql
):
    path, marker = secret
    planted = guarded["uploads"] / uuid.uuid4().hex / "report.json"
    planted.parent.mkdir()
    planted.symlink_to(path)
    cid = conversation()

    outputs = raw_gradio.call(
        guarded["url"], tokens["admin"], [_message(str(planted), meta=True), cid, "", "", ""]
    )

    assert error_code(outputs) == "UNSUPPORTED_FILE"
    assert of_type(outputs[-1], "error")[0]["metadata"]["details"]["reason"] == "link_outside"
    assert fake_llm.requests == []
    _assert_nothing_leaked(marker, sql, fake_llm, guarded["uploads"])


def test_a_file_in_another_folder_of_the_temp_dir_is_refused(
    guarded, tokens, conversation, fake_llm, sql, tmp_path
):
    marker = f"MARKER-{uuid.uuid4().hex}"
    other = tmp_path / "gradio-lookalike" / "abc123" / "data.csv"
    other.parent.mkdir(parents=True)
    other.write_text(f"name,value\n{marker},1\n")

    outputs = raw_gradio.call(
        guarded["url"],
        tokens["admin"],
        [_message(str(other), meta=True), conversation(), "", "", ""],
    )

    assert error_code(outputs) == "UNSUPPORTED_FILE"
    _assert_nothing_leaked(marker, sql, fake_llm, guarded["uploads"])


def test_the_queue_route_of_the_chat_endpoint_refuses_a_server_path_too(
    guarded, secret, tokens, conversation, fake_llm, sql
):
    path, marker = secret
    index = raw_gradio.fn_index(guarded["url"], tokens["admin"])

    events = raw_gradio.join(
        guarded["url"],
        tokens["admin"],
        index,
        [_message(str(path)), None, conversation(), "", "", ""],  # None: Gradio's history
    )

    final = [e for e in events if e.get("msg") == "process_completed"][-1]
    assert final["success"], final
    messages = final["output"]["data"][0]
    assert [m["metadata"].get("code") for m in messages if m["metadata"].get("type")] == [
        "UNSUPPORTED_FILE"
    ]
    _assert_nothing_leaked(marker, sql, fake_llm, guarded["uploads"])


def test_no_other_gradio_event_copies_a_server_file_into_the_servable_cache(
    guarded, secret, tokens, fake_llm, sql
):
    """The chat page's own events (append to the chatbot, ...) take a message too; none may
    copy a server file where Gradio's file route would serve it."""
    path, marker = secret
    headers = {"Authorization": f"Bearer {tokens['admin']}"}
    config = httpx.get(f"{guarded['url']}{GRADIO}/config", headers=headers, timeout=10).json()
    for dependency in config["dependencies"]:
        inputs = dependency.get("inputs") or []
        data = [_message(str(path), meta=True)] + [None] * (len(inputs) - 1)
        with contextlib.suppress(httpx.HTTPError):  # refused outright is fine too
            raw_gradio.join(guarded["url"], tokens["admin"], int(dependency["id"]), data, 20)
    _assert_nothing_leaked(marker, sql, fake_llm, guarded["uploads"])
    served = httpx.get(
        f"{guarded['url']}{GRADIO}/gradio_api/file={path}", headers=headers, timeout=10
    )
    assert marker not in served.text


def test_a_file_uploaded_through_the_upload_route_still_reaches_the_model(
    guarded, tokens, conversation, fake_llm, tmp_path
):
    marker = f"MARKER-{uuid.uuid4().hex}"
    local = tmp_path / "fine.csv"
    local.write_text(f"name,value\n{marker},1\n")
    headers = {"Authorization": f"Bearer {tokens['admin']}"}
    with local.open("rb") as f:
        uploaded = httpx.post(
            f"{guarded['url']}{GRADIO}/gradio_api/upload",
            headers=headers,
            files={"files": ("fine.csv", f, "text/csv")},
            timeout=10,
        )
    assert uploaded.status_code == 200, uploaded.text
    (server_path,) = uploaded.json()
    fake_llm.enqueue({"text": "A CSV with one row."})
    message = {
        "text": "Summarise it",
        "files": [{"path": server_path, "orig_name": "fine.csv", "meta": FILE_META}],
    }

    outputs = raw_gradio.call(
        guarded["url"], tokens["admin"], [message, conversation(), "", "", ""]
    )

    assert text_of(outputs[-1]) == "A CSV with one row."
    assert marker in str(fake_llm.requests[-1])


def test_the_pages_own_submit_event_which_skips_the_textbox_is_refused_too(
    guarded, secret, tokens, conversation, fake_llm, sql
):
    """The page's submit chain hands the saved message (a State, never preprocessed) to the
    same chat function: the refusal must not depend on Gradio's component processing."""
    path, marker = secret
    headers = {"Authorization": f"Bearer {tokens['admin']}"}
    config = httpx.get(f"{guarded['url']}{GRADIO}/config", headers=headers, timeout=10).json()
    submit = next(d for d in config["dependencies"] if d.get("api_name") == "_submit_fn")

    events = raw_gradio.join(
        guarded["url"],
        tokens["admin"],
        int(submit["id"]),
        [_message(str(path)), [], conversation(), "", "", ""],
    )

    final = [e for e in events if e.get("msg") == "process_completed"][-1]
    assert "UNSUPPORTED_FILE" in str(final) or not final["success"]
    assert fake_llm.requests == []
    _assert_nothing_leaked(marker, sql, fake_llm, guarded["uploads"])
