"""Object storage on the local directory store, over real HTTP: listing, reading, refusals,
and keys that try to leave the store (traversal, encodings, symlinks)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.backend.support import assert_error

LIST, READ = "/api/storage/list", "/api/storage/read"
SECRET = "TOP-SECRET-beside-the-store-7f3a"
MAX_READ = 1_000_000  # conf.yml storage.max_read_bytes


@pytest.fixture(scope="module")
def store_root(backend_url: str, data_dir: Path) -> Iterator[Path]:
    """The seeded store, plus files these tests need: a secret beside the root, links out of
    it, an oversize file and a Latin-1 file. Removed afterwards."""
    root = data_dir / "files"
    scratch = root / "test-fixtures"
    scratch.mkdir()
    (data_dir / "secret.txt").write_text(SECRET)
    (scratch / "big.txt").write_bytes(b"a" * (MAX_READ + 1))
    (scratch / "latin1.txt").write_bytes("café crème".encode("latin-1"))
    (scratch / "readme-link.md").symlink_to("../README.md")
    links = [root / "escape.txt", root / "escape-abs.txt", root / "escape-dir"]
    links[0].symlink_to("../secret.txt")
    links[1].symlink_to(data_dir / "secret.txt")
    links[2].symlink_to(data_dir, target_is_directory=True)
    try:
        yield root
    finally:
        shutil.rmtree(scratch)
        for link in links:
            link.unlink()
        (data_dir / "secret.txt").unlink()


def _list(api, headers, **params):
    response = api.get(LIST, params=params, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def _read(api, headers, key):
    response = api.get(READ, params={"key": key}, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_viewer_lists_the_seeded_demo_files_in_key_order(api, as_user, store_root):
    body = _list(api, as_user["viewer"])
    keys = [i["key"] for i in body["items"]]
    for key in ("README.md", "exports/sales_2026_10.csv", "configs/dashboard_42.json"):
        assert key in keys
    assert "images/logo.png" in keys and keys == sorted(keys)
    readme = next(i for i in body["items"] if i["key"] == "README.md")
    assert readme["size"] == (store_root / "README.md").stat().st_size
    assert readme["last_modified"].startswith("20") and body["truncated"] is False


def test_prefix_keeps_keys_that_start_with_it(api, as_user, store_root):
    exports = [i["key"] for i in _list(api, as_user["viewer"], prefix="exports/")["items"]]
    assert exports and all(k.startswith("exports/") for k in exports)
    sales = [i["key"] for i in _list(api, as_user["viewer"], prefix="exports/sales")["items"]]
    assert sales == ["exports/sales_2026_10.csv", "exports/sales_2026_11.csv"]
    assert _list(api, as_user["viewer"], prefix="nothing-here/")["items"] == []


def test_limit_cuts_the_listing_and_says_it_was_truncated(api, as_user, store_root):
    body = _list(api, as_user["viewer"], limit=2)
    assert len(body["items"]) == 2 and body["truncated"] is True
    assert len(_list(api, as_user["viewer"], limit=10**9)["items"]) > 2


def test_a_viewer_reads_markdown_csv_and_json(api, as_user, store_root):
    readme = _read(api, as_user["viewer"], "README.md")
    assert readme["content"].startswith("# Demo object store")
    assert readme["size"] == len(readme["content"].encode()) and readme["key"] == "README.md"
    assert readme["content_type"] == "text/markdown"
    csv = _read(api, as_user["viewer"], "exports/sales_2026_10.csv")
    assert (
        csv["content"].splitlines()[0]
        == "order_id,order_date,region,product,quantity,unit_price,amount"
    )
    assert csv["content_type"] == "text/csv"
    config = json.loads(_read(api, as_user["viewer"], "configs/dashboard_42.json")["content"])
    assert config["dashboard_id"] == 42 and config["title"] == "Sales overview"


def test_the_agent_reads_on_behalf_of_a_viewer(api, as_agent, store_root):
    assert "utm_campaign" in _read(api, as_agent["viewer"], "configs/dashboard_17.json")["content"]


def test_storage_needs_a_signed_in_user(api, store_root):
    assert_error(api.get(LIST), 401, "UNAUTHORIZED")
    assert_error(api.get(READ, params={"key": "README.md"}), 401, "UNAUTHORIZED")


def test_a_binary_file_is_refused_as_unsupported(api, as_user, store_root):
    response = api.get(READ, params={"key": "images/logo.png"}, headers=as_user["viewer"])
    error = assert_error(response, 415, "UNSUPPORTED_FILE")
    assert error["details"]["reason"] == "nul_bytes"
    response = api.get(READ, params={"key": "test-fixtures/latin1.txt"}, headers=as_user["viewer"])
    assert assert_error(response, 415, "UNSUPPORTED_FILE")["details"]["reason"] == "invalid_utf8"


def test_a_file_over_the_size_cap_is_refused_with_the_limit(api, as_user, store_root):
    response = api.get(READ, params={"key": "test-fixtures/big.txt"}, headers=as_user["viewer"])
    error = assert_error(response, 413, "FILE_TOO_LARGE")
    assert error["details"]["limit"] == MAX_READ and error["details"]["size"] == MAX_READ + 1


def test_a_missing_key_is_404_and_a_missing_parameter_is_422(api, as_user, store_root):
    response = api.get(READ, params={"key": "exports/nope.csv"}, headers=as_user["viewer"])
    assert assert_error(response, 404, "NOT_FOUND")["details"] == {"key": "exports/nope.csv"}
    assert_error(
        api.get(READ, params={"key": "exports"}, headers=as_user["viewer"]), 404, "NOT_FOUND"
    )
    assert_error(api.get(READ, headers=as_user["viewer"]), 422, "INVALID_INPUT")


TRAVERSAL = [
    "",
    "..",
    "../secret.txt",
    "../../../../etc/passwd",
    "exports/../../secret.txt",
    "./README.md",
    "exports/./sales_2026_10.csv",
    "exports//sales_2026_10.csv",
    "exports/",
    "...",
    "/etc/passwd",
    "/README.md",
    "C:/secret.txt",
    "..\\secret.txt",
    "exports\\..\\..\\secret.txt",
    "README.md\x00.png",
    "\x00",
    "READ\nME.md",
    "\x1b[31mREADME.md",
    "exports/\u202egpj.csv",
    "%2e%2e/secret.txt",
    "%2E%2E%2Fsecret.txt",
    "..%2fsecret.txt",
    "exports%2f..%2f..%2fsecret.txt",
    "%2e%2e%5csecret.txt",
    "%00",
    "README.md%00.png",
    "%ff%fe",
    "\uff0e\uff0e/secret.txt",
    "x" * 1025,
    "a/" * 600 + "b",
]


@pytest.mark.parametrize("key", TRAVERSAL, ids=range(len(TRAVERSAL)))
def test_keys_that_could_leave_the_store_are_refused_and_nothing_is_read(
    api, as_user, store_root, key
):
    response = api.get(READ, params={"key": key}, headers=as_user["viewer"])
    assert_error(response, 422, "INVALID_KEY")
    assert SECRET not in response.text


@pytest.mark.parametrize("prefix", ["../", "..", "/etc", "exports/../..", "%2e%2e/", "a\\b"])
def test_listing_prefixes_that_could_leave_the_store_are_refused(api, as_user, store_root, prefix):
    response = api.get(LIST, params={"prefix": prefix}, headers=as_user["viewer"])
    assert_error(response, 422, "INVALID_KEY")


def test_a_raw_encoded_traversal_in_the_url_is_refused(api, as_user, store_root):
    for url in (READ + "?key=..%2fsecret.txt", READ + "?key=%2e%2e%2fsecret.txt"):
        assert_error(api.get(url, headers=as_user["viewer"]), 422, "INVALID_KEY")


def test_a_doubly_encoded_key_is_decoded_once_and_read_literally(api, as_user, store_root):
    response = api.get(READ, params={"key": "%252e%252e%252fsecret.txt"}, headers=as_user["viewer"])
    assert_error(response, 404, "NOT_FOUND")
    assert SECRET not in response.text


@pytest.mark.parametrize("key", ["escape.txt", "escape-abs.txt", "escape-dir/secret.txt"])
def test_symlinks_leading_out_of_the_store_are_refused(api, as_user, store_root, key):
    assert os.path.realpath(store_root / key).endswith("secret.txt")  # the link is real
    response = api.get(READ, params={"key": key}, headers=as_user["viewer"])
    assert_error(response, 422, "INVALID_KEY")
    assert SECRET not in response.text


def test_listing_skips_links_out_of_the_store_but_keeps_links_inside(api, as_user, store_root):
    keys = [i["key"] for i in _list(api, as_user["viewer"], limit=1000)["items"]]
    assert not [k for k in keys if k.startswith("escape")]
    assert "test-fixtures/readme-link.md" in keys
    assert _list(api, as_user["viewer"], prefix="escape-dir/")["items"] == []
    linked = _read(api, as_user["viewer"], "test-fixtures/readme-link.md")
    assert linked["content"] == _read(api, as_user["viewer"], "README.md")["content"]
