"""Routing rules, tried in order: the first that matches a request picks the tool and its args."""

# ruff: noqa: RUF001  (Russian words in patterns and answers are intended)
from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from agent.demo import charts
from agent.demo.refusals import destructive, secrets
from agent.demo.request import (
    DEFAULT_DATASOURCE,
    DOTTED_REF,
    FILE_KEY,
    MIGRATION_ID,
    SELECT,
    THIS_DASHBOARD,
    Ask,
    Call,
    Request,
    Route,
    Rule,
)

PROBLEMS = (
    r"problem|fail|broken|invalid|validat|error|issue|wrong"
    r"|проблем|ошиб|слома|пада|валид|не так|красн"
)
HEALTH = PROBLEMS + r"|health|why|status|\bok\b|okay|здоров|почему|статус|состояни|порядк"
PRONOUN = r"\b(it|its|this|that|него|нему|он|его|этот|этого|это|эту|ним|нём|нем)\b"
ABOUT = r"\bown|who\b|charts?\b|details|\bshow|\bopen|владел|графи|подробн|покажи|открой"
# A verb that deploys; "deployments" or "deployed" in a question about logs does not.
DEPLOY = r"(?<![a-z])(re)?deploy(?!ments?\b|s\b|ed\b)|деплой|задеплой|развер|выкат|опубликуй"
SHIP = r"\b(ship|push|roll ?out|release|promote)\b"
ENVIRONMENT = r"\b(prod|production|staging|stage)\b|прод|стейдж|боев"
APPLY = r"\b(apply|run|execute|migrate)\b|накат|примен|выполн|запуст"
REF_AFTER = re.compile(
    r"\b(?:ref|branch|version|ветк[аиуео]|версию?)\s+[\"«]?([a-z0-9][\w./-]{0,127})", re.I
)
NAME_AFTER = re.compile(
    r"\b(?:named|called|name|названием|именем|имя)\s+[\"«]?([a-z][\w./-]{0,63})", re.I
)
KNOWLEDGE_BASE = (
    r"knowledge base|runbook|\bdocs?\b|documentation|баз[аеуы] знаний|инструкц|документац"
)
SCHEMA = r"column|schema|field|describe|колонк|столбц|схем|структур|\bпол[еяю]\b"
COUNT_ROWS = (
    r"count (the )?rows|how many rows|row count|number of rows"
    r"|сколько (всего )?(строк|записей)|посчитай строки|количество строк|число строк"
)
TABLE_NAMED = (
    re.compile(r"(?:table|таблиц[а-яё]*)\s+[\"«]?([a-z_][\w$]*)"),
    re.compile(r"\b([a-z_][\w$]*)\s+table\b"),
)
NOT_TABLES = {"in", "of", "on", "from", "the", "a", "an", "this", "that", "each", "every"}
PREFIX = re.compile(r"(?<![\w/.-])([\w.-]+/)(?=[\s?!,;)]|$)")
KNOWN_FILE = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)*[\w.-]+\.(?:csv|json|txt|md|png|jpe?g|pdf|xlsx?|ya?ml|log)\b", re.I
)
QUERY_AFTER = re.compile(
    r"\b(?:about|named|called|titled|matching|for|про|об?|по|названием)\s+([\w\s-]{2,60}?)\s*[?.!]*$"
)


def _has(pattern: str, text: str) -> bool:
    return re.search(pattern, text) is not None


def _last_branch(req: Request, dashboard_id: int | None) -> dict[str, Any] | None:
    for branch in reversed(req.memory.branches):
        if dashboard_id is None or branch.get("dashboard_id") == dashboard_id:
            return branch
    return None


def deploy(req: Request) -> Route:
    if not (_has(DEPLOY, req.text) or (_has(SHIP, req.text) and _has(ENVIRONMENT, req.text))):
        return None
    dashboard_id = req.dashboard_id
    if dashboard_id is None:
        return Ask("dashboard")
    environment = "production" if _has(r"prod|продакш|\bпрод\b|боев", req.text) else "staging"
    explicit = REF_AFTER.search(req.raw)
    branch = _last_branch(req, dashboard_id)
    if explicit and explicit.group(1).lower() not in {"to", "in", "на", "в"}:
        ref = explicit.group(1)
    elif _has(r"\bmain\b|основн|мейн", req.text) or branch is None:
        ref = "main"
    else:
        ref = str(branch["name"])
    return Call(
        "deploy_dashboard", {"dashboard_id": dashboard_id, "ref": ref, "environment": environment}
    )


def migration(req: Request) -> Route:
    """Applying one: a verb is needed ("логи по миграциям" is about logs, not an apply)."""
    found = MIGRATION_ID.search(req.text)
    if not ((found or _has(r"migrat|миграц", req.text)) and _has(APPLY, req.text)):
        return None
    # "apply this migration" is the one the conversation mentioned last
    migration_id = found.group(1) if found else req.memory.migration_id
    if migration_id is None:
        return Ask("migration")
    datasource = req.datasource() or DEFAULT_DATASOURCE
    return Call("execute_migration", {"datasource": datasource, "migration_id": migration_id})


def commit(req: Request) -> Route:
    if not _has(r"\bcommit|коммит", req.text):
        return None
    explicit = re.search(r"(?:branch|ветк[а-яё]*)\s*#?(\d+)", req.text)
    branch = _last_branch(req, req.dashboard_id)
    if explicit is None and branch is None:
        return Ask("branch")
    branch_id = int(explicit.group(1)) if explicit else int(branch["id"]) if branch else 0
    key = f"demo-{req.memory.commits + 1}"
    chart = {
        "key": key,
        "title": req.quoted or "Demo chart",
        "type": "number",
        "datasource": DEFAULT_DATASOURCE,
        "sql": "SELECT 1 AS value",
        "expected_columns": ["value"],
    }
    message = req.quoted or "Add a demo chart"
    changes = [{"op": "add", "chart": chart}]
    return Call("commit_changes", {"branch_id": branch_id, "message": message, "changes": changes})


def branch(req: Request) -> Route:
    if not _has(r"\bbranch|ветк", req.text):
        return None
    if not _has(r"creat|\bnew\b|make|start|\boff\b|\bfork|созда|нов|сдела|завед|открой", req.text):
        return None
    dashboard_id = req.dashboard_id
    if dashboard_id is None:
        return Ask("dashboard")
    named = NAME_AFTER.search(req.raw)
    name = named.group(1) if named else f"demo-{dashboard_id}-{uuid.uuid4().hex[:6]}"
    return Call("create_branch", {"dashboard_id": dashboard_id, "name": name})


def sql(req: Request) -> Route:
    found = SELECT.search(req.raw)
    if found and (
        _has(r"\bfrom\b|\bsql\b|query|запрос", req.text) or req.text.startswith("select")
    ):
        query = found.group(0).strip().strip("`").rstrip(";").strip()
        datasource = req.datasource(req.text[: found.start()]) or DEFAULT_DATASOURCE
        return Call("execute_sql", {"datasource": datasource, "query": query})
    # "the SQL of the revenue chart on dashboard 42" is in the dashboard, not a query to run
    if _has(r"\bsql\b", req.text) and req.explicit_id is None:
        return Ask("sql")
    return None


def sql_question(req: Request) -> Route:
    """ "Запрос" without SQL: ask for it, once no other reading of the word fits (logs...)."""
    return Ask("sql") if _has(r"\bsql\b|запрос", req.text) else None


def _table(req: Request) -> tuple[str, str] | None:
    """The (datasource, table) a request names: `sample.orders`, "table orders", "orders table"."""
    ref = DOTTED_REF.search(req.raw)
    if ref and not KNOWN_FILE.search(req.raw):
        return ref.group(1), ref.group(2)
    for pattern in TABLE_NAMED:
        for name in pattern.findall(req.text):
            if name not in NOT_TABLES:
                return req.datasource() or DEFAULT_DATASOURCE, str(name)
    return None


def count_rows(req: Request) -> Route:
    """ "Count the rows of sample.customers" is a COUNT(*) the demo can write itself."""
    if not _has(COUNT_ROWS, req.text) or (table := _table(req)) is None:
        return None
    # The name matched an identifier pattern, and the backend runs read-only SQL only.
    query = f"SELECT COUNT(*) AS row_count FROM {table[1]}"  # noqa: S608
    return Call("execute_sql", {"datasource": table[0], "query": query})


def columns(req: Request) -> Route:
    schema = _has(SCHEMA, req.text)
    typed = _has(r"\btype\b|\bтип", req.text) and DOTTED_REF.search(req.raw) is not None
    if not (schema or typed):
        return None
    table = _table(req)
    if table is None:
        return Ask("table")
    return Call("get_table_schema", {"table_ref": f"{table[0]}.{table[1]}"})


def tables(req: Request) -> Route:
    if not _has(r"\btables?\b|таблиц|datasources\b|источник(и|ов) данных", req.text):
        return None
    datasource = req.datasource()
    return Call("list_tables", {"datasource": datasource} if datasource else {})


def logs(req: Request) -> Route:
    if not _has(r"\blogs?\b|\bлог|журнал", req.text):
        return None
    args: dict[str, Any] = {"query": req.quoted, "dashboard_id": req.explicit_id}
    if _has(r"error|ошиб", req.text):
        args["level"] = "error"
    elif _has(r"warn|предупр", req.text):
        args["level"] = "warning"
    now = datetime.now(UTC)
    if _has(r"last hour|past hour|за (последний )?час", req.text):
        args["since"] = (now - timedelta(hours=1)).isoformat()
    elif _has(r"today|сегодня", req.text):
        args["since"] = now.replace(hour=0, minute=0, second=0, microsecond=0).isoformat()
    return Call("query_logs", {k: v for k, v in args.items() if v is not None})


def files(req: Request) -> Route:
    """Files by word ("files", "папка"), by a prefix ("exports/") or by a file name."""
    named = KNOWN_FILE.search(req.raw) or PREFIX.search(req.raw)
    words = r"\bfiles?\b|файл|storage|хранилищ|\bs3\b|\bread\b|прочитай|folder|папк"
    if not (named or _has(words, req.text)):
        return None
    key = FILE_KEY.search(req.raw)
    if key and not key.group(1).endswith("/"):
        return Call("read_file", {"key": key.group(1)})
    prefix = re.search(r"(?<![\w/])([\w.-]+/)", req.raw)
    return Call("list_files", {"prefix": prefix.group(1)} if prefix else {})


def dashboard(req: Request) -> Route:
    if req.explicit_id is not None:
        name = "dashboard_health" if _has(HEALTH, req.text) else "get_dashboard"
        return Call(name, {"dashboard_id": req.explicit_id})
    pronoun = _has(PRONOUN, req.text) and not _has(r"dashboards|дашборды|дашбордов", req.text)
    referenced = pronoun or _has(THIS_DASHBOARD, req.text)
    if referenced and req.dashboard_id and _has(HEALTH, req.text):
        return Call("dashboard_health", {"dashboard_id": req.dashboard_id})
    if referenced and req.dashboard_id and _has(ABOUT, req.text):
        return Call("get_dashboard", {"dashboard_id": req.dashboard_id})
    return None


def search(req: Request) -> Route:
    if not _has(r"dashboard|дашборд|панел|search|find|\blist\b|найди|поиск|покажи", req.text):
        return None
    args: dict[str, Any] = {}
    if _has(PROBLEMS, req.text):
        args["status"] = "failing"
    elif _has(r"warning|предупрежд", req.text):
        args["status"] = "warning"
    elif _has(r"healthy|\bok\b|working|исправн|рабоч|в порядке", req.text):
        args["status"] = "ok"
    named = QUERY_AFTER.search(req.text)
    query = req.quoted or (named.group(1).strip() if named and not args else None)
    if query and not _has(r"^(it|them|me|us|него|них|меня)$", query):
        args["query"] = query
    return Call("search_dashboards", args)


def howto(req: Request) -> Route:
    """A how-to question ("how do I...", "что такое...") goes to the knowledge base first,
    unless it names something to look at ("what's in exports/?", "what is dashboard 42?")."""
    question = r"^(how (do|does|to|can|should)|what (is|are|does)|what's|explain|why do|как\b)"
    if not _has(question, req.text) or _names_an_object(req):
        return None
    return Call("lookup_knowledge", {"query": req.raw.strip()[:500]})


def _names_an_object(req: Request) -> bool:
    """A dashboard id, a file, a storage prefix or a `datasource.table`."""
    if req.explicit_id is not None:
        return True
    return any(p.search(req.raw) for p in (KNOWN_FILE, PREFIX, DOTTED_REF))


def runbook(req: Request) -> Route:
    """Asked for the docs by name ("find the runbook", "в базе знаний"): that comes first."""
    if not _has(KNOWLEDGE_BASE, req.text) or PREFIX.search(req.raw) or FILE_KEY.search(req.raw):
        return None
    return Call("lookup_knowledge", {"query": req.raw.strip()[:500]})


def knowledge(req: Request) -> Route:
    topics = r"knowledge|runbook|\bdocs?\b|documentation|article|что такое|объясни|документац"
    if not _has(topics + r"|стать|база знаний|инструкц", req.text):
        return None
    return Call("lookup_knowledge", {"query": req.raw.strip()[:500]})


RULES: tuple[Rule, ...] = (
    secrets,
    howto,
    deploy,
    migration,
    commit,
    branch,
    destructive,
    runbook,
    sql,
    charts.route,
    count_rows,
    columns,
    tables,
    logs,
    files,
    dashboard,
    knowledge,
    search,
    sql_question,
)


def route(req: Request) -> Route:
    """The first rule's answer for `req`; None when nothing matches (the model shows help)."""
    for rule in RULES:
        routed = rule(req)
        if routed is not None:
            return routed
    return None
