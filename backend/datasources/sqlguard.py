"""The SQL guard: accept exactly one read-only SELECT, refuse everything else with a reason.

The guard is the first of three layers. The executors add the second (a single-statement
driver path: a Postgres server-side cursor, `sqlite3.execute`) and the third (a read-only
transaction or a read-only SQLite connection with an authorizer).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from backend.codes import Code
from backend.errors import Unprocessable

MAX_SQL_CHARS = 100_000

# Statement and clause types that never belong in a read-only query, with the word users know.
_FORBIDDEN: dict[type[exp.Expr], str] = {
    exp.Insert: "INSERT",
    exp.Update: "UPDATE",
    exp.Delete: "DELETE",
    exp.Merge: "MERGE",
    exp.Create: "CREATE",
    exp.Drop: "DROP",
    exp.Alter: "ALTER",
    exp.TruncateTable: "TRUNCATE",
    exp.Copy: "COPY",
    exp.Set: "SET",
    exp.Pragma: "PRAGMA",
    exp.Attach: "ATTACH",
    exp.Detach: "DETACH",
    exp.Grant: "GRANT",
    exp.Revoke: "REVOKE",
    exp.Transaction: "BEGIN",
    exp.Commit: "COMMIT",
    exp.Rollback: "ROLLBACK",
    exp.Use: "USE",
    exp.Kill: "KILL",
    exp.Analyze: "ANALYZE",
    exp.Comment: "COMMENT",
    exp.LoadData: "LOAD DATA",
    exp.Cache: "CACHE",
    exp.Uncache: "UNCACHE",
    exp.Refresh: "REFRESH",
    exp.Execute: "EXECUTE",
    exp.Describe: "DESCRIBE",
}
_DML = (exp.Insert, exp.Update, exp.Delete, exp.Merge)

# Functions that read or write the server's files, reach other servers, change settings,
# signal other sessions, take locks or run SQL given as a string (which the guard cannot see).
DENIED_FUNCTIONS = frozenset(
    {
        "set_config",
        "query_to_xml",
        "query_to_xmlschema",
        "query_to_xml_and_xmlschema",
        "cursor_to_xml",
        "cursor_to_xmlschema",
        "nextval",
        "setval",
        "txid_current",
        "pg_current_xact_id",
        "pg_notify",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_promote",
        "pg_stat_file",
        "pg_import_system_collations",
        "pg_log_backend_memory_contexts",
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
        "xp_cmdshell",
        "sys_exec",
        "sys_eval",
    }
)
DENIED_PREFIXES = (
    "lo_",
    "dblink",
    "pg_read_",
    "pg_ls_",
    "pg_file_",
    "pg_terminate_",
    "pg_cancel_",
    "pg_advisory",
    "pg_try_advisory",
    "pg_logical_",
    "pg_replication_",
    "pg_create_",
    "pg_drop_",
    "pg_copy_",
    "pg_switch_",
    "pg_backup_",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_wal_replay_",
    "pg_stat_reset",
)
# System tables that hold password hashes, connection secrets or server files.
DENIED_TABLES = frozenset(
    {
        "pg_authid",
        "pg_shadow",
        "pg_user_mapping",
        "pg_user_mappings",
        "pg_hba_file_rules",
        "pg_ident_file_mappings",
        "pg_file_settings",
        "pg_largeobject",
    }
)


class SqlRejected(Unprocessable):
    """A statement the guard refuses; `details.rule` is stable, `details.reason` says why."""

    code = Code.SQL_REJECTED

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(f"Query refused: {reason}", details={"rule": rule, "reason": reason})
        self.rule = rule
        self.reason = reason


def guard(sql: str, *, dialect: str) -> exp.Query:
    """Return the parsed statement when `sql` is exactly one read-only SELECT, else raise."""
    statement = _single_statement(sql, dialect)
    if not isinstance(statement, exp.Query):
        kind = _kind(statement) if _is_statement(statement) else _first_word(sql, dialect)
        raise SqlRejected("not_select", f"{kind} statements are not allowed, only SELECT")
    for node in statement.walk():
        _check_node(node)
    return statement


def _single_statement(sql: str, dialect: str) -> exp.Expr:
    if not sql.strip():
        raise SqlRejected("empty", "the query is empty")
    if len(sql) > MAX_SQL_CHARS:
        raise SqlRejected("too_long", f"the query is longer than {MAX_SQL_CHARS} characters")
    try:
        parsed = sqlglot.parse(sql, read=dialect)
    except SqlglotError as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SqlRejected("unparseable", f"the query could not be parsed: {first_line}") from exc
    except RecursionError as exc:
        raise SqlRejected("too_complex", "the query is nested too deeply") from exc
    # Comment-only "statements" after a trailing semicolon are harmless; anything else is not.
    statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
    if not statements:
        raise SqlRejected("empty", "the query contains no statement")
    if len(statements) > 1:
        raise SqlRejected(
            "multiple_statements",
            f"exactly one statement is allowed, found {len(statements)}",
        )
    return statements[0]


def _check_node(node: exp.Expr) -> None:
    if isinstance(node, _DML) and node.find_ancestor(exp.CTE) is not None:
        raise SqlRejected("data_modifying_cte", f"a {_kind(node)} inside a WITH clause")
    if isinstance(node, exp.Into):
        raise SqlRejected("select_into", "SELECT ... INTO writes a table")
    if isinstance(node, exp.Lock):
        raise SqlRejected("locking_clause", "locking clauses (FOR UPDATE / FOR SHARE) take locks")
    kind = _FORBIDDEN.get(type(node)) or ("COMMAND" if isinstance(node, exp.Command) else None)
    if kind is not None:
        raise SqlRejected("forbidden_statement", f"{_kind(node)} is not allowed in a query")
    if isinstance(node, exp.Func):
        name = _function_name(node)
        if name in DENIED_FUNCTIONS or name.startswith(DENIED_PREFIXES):
            raise SqlRejected("denied_function", f"the function {name}() is not allowed")
    if isinstance(node, exp.Table) and node.name.lower() in DENIED_TABLES:
        raise SqlRejected("denied_table", f"the system table {node.name.lower()} is not allowed")


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def _is_statement(node: exp.Expr) -> bool:
    return isinstance(node, exp.Command) or type(node) in _FORBIDDEN


def _first_word(sql: str, dialect: str) -> str:
    """What a statement sqlglot reads as an expression (`DISCARD ALL`) starts with."""
    tokens = sqlglot.tokenize(sql, read=dialect)
    return tokens[0].text.upper() if tokens else "EMPTY"


def _kind(node: exp.Expr) -> str:
    """The statement's keyword as users write it (CALL, VACUUM, DELETE...)."""
    if isinstance(node, exp.Command):
        return str(node.this).upper() or "COMMAND"
    if type(node) in _FORBIDDEN:
        return _FORBIDDEN[type(node)]
    return type(node).__name__.upper()
