"""The SQL guard on its own: what it accepts, and how a refusal reads."""

from __future__ import annotations

import pytest
from sqlglot import exp

from backend.datasources.sqlguard import MAX_SQL_CHARS, SqlRejected, guard


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "(SELECT 1)",
        "SELECT 1 UNION SELECT 2 EXCEPT SELECT 3",
        "WITH a AS (SELECT 1 AS x) SELECT x FROM a",
        "SELECT * FROM (VALUES (1), (2)) AS v(x)",
        "SELECT 1; -- trailing comment",
        "SELECT 'DROP TABLE x; DELETE FROM y' AS text",
        'SELECT "delete" FROM t',
    ],
)
def test_one_read_only_select_is_accepted(sql, dialect):
    assert isinstance(guard(sql, dialect=dialect), exp.Query)


def test_a_refusal_names_the_statement_and_carries_a_stable_rule():
    with pytest.raises(SqlRejected) as caught:
        guard("DELETE FROM orders", dialect="sqlite")
    assert caught.value.code == "SQL_REJECTED" and caught.value.status_code == 422
    assert caught.value.details == {
        "rule": "not_select",
        "reason": "DELETE statements are not allowed, only SELECT",
    }


def test_a_denied_function_is_found_however_it_is_spelled():
    for sql in ["SELECT \"PG_READ_FILE\"('x')", "SELECT pg_catalog.Pg_Read_File('x')"]:
        with pytest.raises(SqlRejected) as caught:
            guard(sql, dialect="postgres")
        assert caught.value.rule == "denied_function"


def test_a_write_hidden_deep_in_a_subquery_is_found():
    sql = "SELECT * FROM t WHERE x = (WITH d AS (DELETE FROM t RETURNING x) SELECT x FROM d)"
    with pytest.raises(SqlRejected) as caught:
        guard(sql, dialect="postgres")
    assert caught.value.rule == "data_modifying_cte"


def test_an_oversized_query_is_refused_before_parsing():
    with pytest.raises(SqlRejected) as caught:
        guard("SELECT 1 " + " " * MAX_SQL_CHARS, dialect="sqlite")
    assert caught.value.rule == "too_long"
