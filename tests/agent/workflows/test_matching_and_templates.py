"""The pieces of the workflow engine that need no process: keyword matching in Russian and
English, and the sandboxed templates (types kept, unsafe or undefined reaches refused)."""

from __future__ import annotations

import pytest

from agent.workflows.definitions import Definition
from agent.workflows.matcher import language, match
from agent.workflows.templates import Renderer, TemplateFailure


def definition(name: str, *keywords: str) -> Definition:
    return Definition(
        name=name, description="", trigger_keywords=keywords, steps=(), final_answer=""
    )


FOUND = [
    definition("explore_table", "describe table", "структура таблицы", "what columns"),
    definition("todays_errors", "today's errors", "ошибки за сегодня"),
    definition("predeploy", "check before deploy"),
    definition("deploy", "deploy to staging"),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Describe the table sample.orders", "explore_table"),
        ("Какая структура таблицы заказов?", "explore_table"),
        ("Покажи структуру таблиц", "explore_table"),
        ("What columns does orders have?", "explore_table"),
        ("Show me today's errors", "todays_errors"),
        ("Ошибки за сегодня?", "todays_errors"),
        ("Please check dashboard 42 before the deploy", "predeploy"),
        ("Deploy dashboard 42 to staging", "deploy"),
        ("hello there", None),
        ("deploy", None),  # a keyword matches only with all of its words
    ],
)
def test_keywords_match_by_stems_in_russian_and_english(text, expected):
    found = match(text, FOUND)
    assert (found.name if found else None) == expected


def test_the_longest_matching_keyword_wins_and_ties_go_to_file_order():
    both = [definition("short", "errors"), definition("long", "errors today")]
    assert match("errors today", both).name == "long"  # type: ignore[union-attr]
    assert match("errors", both).name == "short"  # type: ignore[union-attr]


def test_the_language_is_read_from_the_text():
    assert language("Покажи ошибки за сегодня") == "ru" and language("show errors") == "en"


def renderer(**input_: object) -> Renderer:
    data = {"text": "", "files": [], "tables": [], "focus": None, "lang": "en", **input_}
    steps = {"schema": {"items": [{"name": "id"}], "datasource": "sample", "table": "orders"}}
    return Renderer({"input": data, "steps": steps, "now": "n", "today": "t"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Check dashboard 42.", 42), ("dashboard #17 please", 17), ("v1.2 of 9", 9)],
)
def test_a_lone_expression_keeps_its_type(text, expected):
    value = renderer(text=text).value(
        "{{ input.focus.id if input.focus else (input.text | number) }}"
    )
    assert value == expected


def test_the_focus_wins_over_the_text_and_params_render_recursively():
    r = renderer(text="dashboard 42", focus={"kind": "dashboard", "id": 7})
    assert r.value({"a": "{{ input.focus.id }}", "b": ["x {{ steps.schema.table }}", 3]}) == {
        "a": 7,
        "b": ["x orders", 3],
    }


def test_a_mapping_key_wins_over_a_method_of_the_same_name():
    assert (
        renderer().text("{{ steps.schema.items | length }} {{ steps.schema.items[0].name }}")
        == "1 id"
    )


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("{{ steps.schema.__class__ }}", "unsafe"),
        ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "unsafe"),
        ("{{ steps.schema.items.pop() }}", "unsafe"),
        ("{{ steps.schema.missing }}", "has no attribute 'missing'"),
        ("{{ steps.nothing.text }}", "has no attribute 'nothing'"),
        ("{{ input.text | number }}", "no number found"),
        ("{{ input.text | table_ref }}", "no datasource.table found"),
    ],
)
def test_unsafe_or_undefined_reaches_fail_with_a_clear_reason(source, says):
    with pytest.raises(TemplateFailure, match=says):
        renderer(text="e.g. nothing here").text(source)
    with pytest.raises(TemplateFailure, match=says):
        renderer(text="e.g. nothing here").value(source)


def test_table_ref_takes_the_first_datasource_table_not_an_abbreviation():
    assert renderer(text="e.g. look at sample.orders").value("{{ input.text | table_ref }}") == (
        "sample.orders"
    )
