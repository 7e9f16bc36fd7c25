"""The person's language from Accept-Language (agent/language.py)."""

from __future__ import annotations

import pytest

from agent import language
from agent.tools.names import describe_call


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        ("ru", "ru"),
        ("ru-RU,ru;q=0.9,en;q=0.8", "ru"),
        ("en-US,en;q=0.9,ru;q=0.8", "en"),
        ("de-DE,ru;q=0.5", "ru"),
        ("en;q=0.2,ru;q=0.7", "ru"),
        ("ru;q=0,en", "en"),
        ("fr", "en"),
        ("", "en"),
        (None, "en"),
        ("ru;q=abc", "en"),
        ("ru," * 300, "en"),
    ],
)
def test_the_preferred_of_our_languages_is_chosen(header, lang):
    assert language.from_header(header) == lang


def test_the_header_name_is_read_in_any_case():
    assert language.from_headers({"ACCEPT-LANGUAGE": "ru"}) == "ru"
    assert language.from_headers({}) == "en"


def test_every_confirmation_line_has_a_russian_form():
    args = {"dashboard_id": 42, "ref": "main", "environment": "production", "branch_id": 3}
    args |= {"message": "m", "changes": [{}], "migration_id": "x", "datasource": "sample"}
    for name in ("deploy_dashboard", "commit_changes", "execute_migration"):
        russian = describe_call(name, args, "ru")
        assert russian != describe_call(name, args, "en") and "?" not in russian
