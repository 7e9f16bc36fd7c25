"""The SQL guard corpus over HTTP: every attempt is refused with a reason and changes nothing."""

from __future__ import annotations

import pytest

from tests.backend.support import assert_error

SAMPLE_REFUSED = [
    ("DROP TABLE customers", "not_select"),
    ("DELETE FROM orders", "not_select"),
    ("UPDATE products SET price = 0", "not_select"),
    ("INSERT INTO customers (id, name) VALUES (99999, 'x')", "not_select"),
    ("REPLACE INTO products (id, sku) VALUES (1, 'x')", "not_select"),
    ("CREATE TABLE stolen AS SELECT * FROM customers", "not_select"),
    ("ALTER TABLE orders ADD COLUMN hacked int", "not_select"),
    ("SELECT 1; DROP TABLE customers", "multiple_statements"),
    ("SELECT 1; -- x\nDROP TABLE customers", "multiple_statements"),
    ("SELECT 1 /* */; DELETE FROM orders", "multiple_statements"),
    ("SELECT * FROM customers; SELECT * FROM orders", "multiple_statements"),
    ("BEGIN; DELETE FROM orders; COMMIT", "multiple_statements"),
    ("/* just a comment */ DELETE FROM orders", "not_select"),
    ("WITH x AS (DELETE FROM orders RETURNING id) SELECT * FROM x", "data_modifying_cte"),
    (
        "WITH x AS (UPDATE products SET price = 0 RETURNING id) SELECT count(*) FROM x",
        "data_modifying_cte",
    ),
    (
        "WITH x AS (INSERT INTO customers (id) VALUES (1) RETURNING id) SELECT * FROM x",
        "data_modifying_cte",
    ),
    ("SELECT * INTO backup FROM customers", "select_into"),
    ("PRAGMA writable_schema = 1", "not_select"),
    ("PRAGMA table_info(orders)", "not_select"),
    ("ATTACH DATABASE '/tmp/evil.db' AS evil", "not_select"),
    ("DETACH DATABASE main", "not_select"),
    ("SELECT load_extension('/tmp/evil.so')", "denied_function"),
    ("VACUUM", "not_select"),
    ("VACUUM INTO '/tmp/copy.db'", "not_select"),
    ("REINDEX orders", "not_select"),
    ("ANALYZE", "not_select"),
    ("EXPLAIN SELECT 1", "not_select"),
    ("SELECT * FROM orders FOR UPDATE", "locking_clause"),
    ("SELECT * FROM orders WHERE id IN (SELECT id FROM orders FOR UPDATE)", "locking_clause"),
    ("SELECT 'unterminated", "unparseable"),
    ("SELEC name FROM customers", "unparseable"),
    ("   ", "empty"),
    ("(" * 3000 + "SELECT 1" + ")" * 3000, "too_complex"),
]

WAREHOUSE_REFUSED = [
    ("COPY customers TO '/tmp/customers.csv'", "not_select"),
    ("COPY (SELECT 1) TO PROGRAM 'id'", "not_select"),
    ("SELECT lo_import('/etc/passwd')", "denied_function"),
    ("SELECT lo_export(1, '/tmp/x')", "denied_function"),
    ("SELECT pg_read_file('/etc/passwd')", "denied_function"),
    ("SELECT pg_catalog.pg_read_binary_file('/etc/passwd')", "denied_function"),
    ("SELECT * FROM pg_ls_dir('.')", "denied_function"),
    ("SELECT dblink_exec('dbname=postgres', 'DROP TABLE customers')", "denied_function"),
    ("SELECT set_config('default_transaction_read_only', 'off', false)", "denied_function"),
    ("SELECT pg_terminate_backend(pg_backend_pid())", "denied_function"),
    ("SELECT query_to_xml('DELETE FROM customers', true, true, '')", "denied_function"),
    ("SELECT pg_advisory_lock(1)", "denied_function"),
    ("SELECT nextval('some_sequence')", "denied_function"),
    ("SET default_transaction_read_only = off", "not_select"),
    ("SET ROLE postgres", "not_select"),
    ("RESET ROLE", "not_select"),
    ("CALL do_something()", "not_select"),
    ("SELECT * FROM customers FOR SHARE", "locking_clause"),
    ("SELECT * FROM customers FOR NO KEY UPDATE SKIP LOCKED", "locking_clause"),
    ("GRANT ALL ON customers TO PUBLIC", "not_select"),
    ("REVOKE SELECT ON customers FROM PUBLIC", "not_select"),
    ("VACUUM FULL customers", "not_select"),
    ("TRUNCATE customers", "not_select"),
    ("LOCK TABLE customers", "not_select"),
    ("DO $$ BEGIN DELETE FROM customers; END $$", "not_select"),
    ("PREPARE p AS DELETE FROM customers", "not_select"),
    ("LISTEN channel", "not_select"),
    ("DISCARD ALL", "not_select"),
    ("CREATE TEMP TABLE x AS SELECT 1", "not_select"),
    ("CREATE EXTENSION dblink", "not_select"),
    ("ALTER SYSTEM SET work_mem = '1GB'", "not_select"),
    ("CHECKPOINT", "not_select"),
    ("SELECT * FROM pg_authid", "denied_table"),
    ("WITH d AS (DELETE FROM customers RETURNING *) SELECT count(*) FROM d", "data_modifying_cte"),
    ("SELECT * INTO TEMP t FROM customers", "select_into"),
    ("SELECT 1 UNION SELECT 2; DELETE FROM customers", "multiple_statements"),
    ("SELECT E'\\''; DROP TABLE customers; --'", "multiple_statements"),
    ("WITH a AS (SELECT 1) DELETE FROM customers", "not_select"),
]

CORPUS = [("sample", sql, rule) for sql, rule in SAMPLE_REFUSED] + [
    ("warehouse", sql, rule) for sql, rule in WAREHOUSE_REFUSED
]


def test_the_corpus_holds_at_least_forty_attempts():
    assert len(CORPUS) >= 40


@pytest.mark.parametrize(("datasource", "sql", "rule"), CORPUS, ids=lambda v: str(v)[:40])
def test_a_statement_that_is_not_one_read_only_select_is_refused_and_changes_nothing(
    query, fingerprint, datasource, sql, rule
):
    before = fingerprint(datasource)
    error = assert_error(query(datasource, sql), 422, "SQL_REJECTED")
    assert error["details"]["rule"] == rule
    assert error["details"]["reason"] and error["details"]["reason"] in error["message"]
    assert fingerprint(datasource) == before


def test_a_function_that_writes_is_stopped_by_the_read_only_transaction(query, fingerprint):
    before = fingerprint("warehouse")
    error = assert_error(query("warehouse", "SELECT bump()"), 422, "SQL_REJECTED")
    assert error["details"]["rule"] == "write_attempt"
    assert "read-only" in error["details"]["reason"]
    assert fingerprint("warehouse") == before


@pytest.mark.parametrize(
    ("datasource", "sql"),
    [
        ("warehouse", "SELECT pg_sleep(60)"),
        (
            "sample",
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
            "SELECT count(*) FROM r",
        ),
    ],
)
def test_a_query_running_past_the_timeout_is_cancelled_and_the_datasource_still_answers(
    query, datasource, sql
):
    error = assert_error(query(datasource, sql), 422, "SQL_TIMEOUT")
    assert error["details"]["timeout_s"] == 2
    assert "2s" in error["message"]
    after = query(datasource, "SELECT count(*) AS n FROM customers")
    assert after.status_code == 200, after.text
    assert after.json()["rows"] == [[{"warehouse": 200, "sample": 1000}[datasource]]]
