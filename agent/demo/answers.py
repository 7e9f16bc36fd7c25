"""The demo model's words: short summaries of tool results, questions and help, in Russian or
English, always labelled as the demo model."""

# ruff: noqa: RUF001  (Russian words in patterns and answers are intended)
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

LABEL = "[demo model] "
MAX_LINES = 5

HELP = {
    "en": (
        "I am the built-in offline demo model (no LLM is configured), so I understand a few "
        "kinds of requests:\n"
        '- find dashboards: "show dashboards with validation problems"\n'
        '- one dashboard, by its title or the page open beside me: "{one}", '
        '"why is {two} failing?", "why is this failing?"\n'
        '- changes: "create a branch for it", "commit to the branch", '
        '"deploy {one} to production" (asks for confirmation)\n'
        '- data: "list tables", "columns of <datasource>.<table>", '
        '"sql: select ... from ...", "apply migration <id> on <datasource>"\n'
        '- files, logs, knowledge: "list files", "show error logs", '
        '"how do I deploy a dashboard?"'
    ),
    "ru": (
        "Я встроенная офлайн-демо-модель (LLM не настроена) и понимаю несколько видов "
        "запросов:\n"
        "- поиск: «покажи дашборды с проблемами валидации»\n"
        "- один дашборд, по названию или открытый рядом: «{one}», «почему {two} падает?», "
        "«почему это падает?»\n"
        "- изменения: «создай ветку для него», «закоммить в ветку», "
        "«задеплой {one} в прод» (с подтверждением)\n"
        "- данные: «покажи таблицы», «колонки <источник>.<таблица>», "
        "«sql: select ... from ...», «примени миграцию <id> к <источнику>»\n"
        "- файлы, логи, знания: «покажи файлы», «логи ошибок», «как задеплоить дашборд?»"
    ),
}
HELP_DASHBOARDS = {
    "en": "\nDashboards here: {titles}.",
    "ru": "\nДашборды здесь: {titles}.",
}
NO_TITLE = {"en": "dashboard <title>", "ru": "дашборд <название>"}
STATUS_RU = {
    "ok": "в порядке",
    "warning": "предупреждение",
    "failing": "ошибка",
    "unknown": "не проверен",
    "passed": "пройдена",
    "failed": "не пройдена",
}


QUESTIONS = {
    "dashboard": (
        'Which dashboard? Name it by id, e.g. "dashboard 42".',
        "Какой дашборд? Укажите номер, например «дашборд 42».",
    ),
    "branch": (
        'Which branch? Create one first ("create a branch for dashboard 42") or name '
        'it, e.g. "commit to branch 3".',
        "Какая ветка? Сначала создайте её («создай ветку для дашборда 42») или укажите "
        "номер: «закоммить в ветку 3».",
    ),
    "migration": (
        'Which migration? e.g. "apply migration 20261101_inventory_snapshots on sample".',
        "Какую миграцию? Например «примени миграцию 20261101_inventory_snapshots к sample».",
    ),
    "sql": (
        'Send the query itself, e.g. "sql: select * from orders".',
        "Пришлите сам запрос, например «sql: select * from orders».",
    ),
    "table": (
        'Which table? e.g. "columns of sample.orders".',
        "Какая таблица? Например «колонки sample.orders».",
    ),
    "secret": (
        "I can't show passwords, keys or tokens: they are never given to me.",
        "Пароли, ключи и токены я показать не могу: у меня их нет.",
    ),
    "delete": (
        "I can't delete tables, dashboards, users or data: no tool here does that. "
        'A chart can be removed on a branch with a commit ("commit to branch 3: remove chart X").',
        "Удалять таблицы, дашборды, пользователей или данные я не могу: такого инструмента нет. "
        "График можно убрать в ветке коммитом («закоммить в ветку 3: удалить график X»).",
    ),
}


def help_text(lang: str, dashboards: list[dict[str, Any]] | None = None) -> str:
    """What the demo understands; the examples name dashboards that exist (when it was given
    them: the help asks `search_dashboards` first), never ones that may not."""
    titles = [str(d.get("title")) for d in dashboards or [] if d.get("title")]
    one = titles[0] if titles else NO_TITLE[lang]
    two = titles[1] if len(titles) > 1 else one
    text = HELP[lang].format(one=one, two=two)
    if titles:
        text += HELP_DASHBOARDS[lang].format(titles=", ".join(titles[:MAX_LINES]))
    return LABEL + text


def status_word(status: Any, lang: str) -> str:
    """A status as the person reads it: Russian words in a Russian answer."""
    return STATUS_RU.get(str(status), str(status)) if lang == "ru" else str(status)


def named(body: dict[str, Any], key: str = "id") -> str:
    """How answers name a dashboard: its title, with the platform's id."""
    title = body.get("title")
    return f"{title} (id {body.get(key)})" if title else f"#{body.get(key)}"


def question(topic: str, lang: str) -> str:
    english, russian = QUESTIONS[topic]
    return LABEL + (russian if lang == "ru" else english)


def _t(lang: str, en: str, ru: str) -> str:
    return ru if lang == "ru" else en


def _lines(items: list[Any], render: Callable[[Any], str]) -> str:
    shown = [f"- {render(item)}" for item in items[:MAX_LINES]]
    more = len(items) - MAX_LINES
    return "\n".join(shown + ([f"- … (+{more})"] if more > 0 else []))


def label(item: Any) -> str:
    """A result item's name (its name, key, title, message or id), else its JSON, cut."""
    if not isinstance(item, dict):
        return str(item)
    for key in ("name", "key", "title", "message", "id"):
        if key in item:
            return str(item[key])
    return json.dumps(item, ensure_ascii=False)[:120]


def _dashboards(body: dict[str, Any], lang: str) -> str:
    items = body.get("items", [])
    if not items:
        return _t(lang, "No dashboards match.", "Подходящих дашбордов нет.")
    head = _t(
        lang,
        f"Found {body.get('total', len(items))} dashboard(s):",
        f"Найдено дашбордов: {body.get('total', len(items))}.",
    )
    return (
        head + "\n" + _lines(items, lambda d: f"{named(d)} — {status_word(d.get('status'), lang)}")
    )


def _dashboard(body: dict[str, Any], lang: str) -> str:
    charts, branches = len(body.get("charts", [])), len(body.get("branches", []))
    return _t(
        lang,
        f'Dashboard "{body.get("title")}" (id {body.get("id")}, owner {body.get("owner")}): '
        f"status {body.get('status')}, {charts} chart(s), {branches} branch(es).",
        f"Дашборд «{body.get('title')}» (id {body.get('id')}, владелец {body.get('owner')}): "
        f"статус: {status_word(body.get('status'), lang)}, графиков: {charts}, "
        f"веток: {branches}.",
    )


def _health(body: dict[str, Any], lang: str) -> str:
    run = body.get("latest_run") or {}
    bad = [c for c in run.get("charts", []) if c.get("status") != "ok"]
    head = _t(
        lang,
        f"Dashboard {_health_name(body)} is {body.get('status')}.",
        f"Дашборд {_health_name(body)}: статус: {status_word(body.get('status'), lang)}.",
    )
    if not bad:
        return head + " " + _t(lang, "No chart problems found.", "Проблем в графиках нет.")
    lines = _lines(
        bad,
        lambda c: (
            f"{c.get('chart_title') or c.get('chart_key')}: "
            f"{status_word(c.get('status'), lang)} — {c.get('message')}"
        ),
    )
    return head + " " + _t(lang, "Problem charts:", "Проблемные графики:") + "\n" + lines


def _health_name(body: dict[str, Any]) -> str:
    title = body.get("dashboard_title") or body.get("title")
    return f"{title} (id {body.get('dashboard_id')})" if title else f"#{body.get('dashboard_id')}"


def _branch(body: dict[str, Any], lang: str) -> str:
    return _t(
        lang,
        f'Created branch "{body.get("name")}" (id {body.get("id")}) '
        f"of dashboard #{body.get('dashboard_id')}.",
        f"Создана ветка «{body.get('name')}» (id {body.get('id')}) "
        f"дашборда #{body.get('dashboard_id')}.",
    )


def _commit(body: dict[str, Any], lang: str) -> str:
    return _t(
        lang,
        f"Committed to branch {body.get('branch_id')}: version {body.get('version_id')} "
        f'"{body.get("message")}", {body.get("chart_count")} chart(s).',
        f"Закоммичено в ветку {body.get('branch_id')}: версия {body.get('version_id')} "
        f"«{body.get('message')}», графиков: {body.get('chart_count')}.",
    )


def _deploy(body: dict[str, Any], lang: str) -> str:
    status = (body.get("validation") or {}).get("status", "unknown")
    return _t(
        lang,
        f"Deployed dashboard #{body.get('dashboard_id')} ({body.get('ref')}) to "
        f"{body.get('environment')}: version {body.get('version_id')}, validation {status}.",
        f"Дашборд #{body.get('dashboard_id')} ({body.get('ref')}) развёрнут в "
        f"{body.get('environment')}: версия {body.get('version_id')}, "
        f"проверка: {status_word(status, lang)}.",
    )


def _listing(what_en: str, what_ru: str) -> Callable[[dict[str, Any], str], str]:
    def render(body: dict[str, Any], lang: str) -> str:
        items = body.get("items", body.get("rows", []))
        head = _t(
            lang,
            f"{what_en}: {body.get('total', len(items))}.",
            f"{what_ru}: {body.get('total', len(items))}.",
        )
        return head + ("\n" + _lines(items, label) if items else "")

    return render


def _tables(body: dict[str, Any], lang: str) -> str:
    if "datasources" in body:
        sources = body["datasources"]
        return (
            _t(lang, "Datasources:", "Источники данных:")
            + "\n"
            + _lines(sources, lambda s: f"{s.get('name')}: {', '.join(s.get('tables', [])) or '—'}")
        )
    names = ", ".join(label(t) for t in body.get("items", []))
    return _t(
        lang,
        f"Tables in {body.get('datasource')}: {names}.",
        f"Таблицы в {body.get('datasource')}: {names}.",
    )


def _columns(body: dict[str, Any], lang: str) -> str:
    cols = ", ".join(f"{c.get('name')} {c.get('type')}" for c in body.get("items", []))
    return _t(
        lang,
        f"{body.get('datasource')}.{body.get('table')} columns: {cols}.",
        f"Колонки {body.get('datasource')}.{body.get('table')}: {cols}.",
    )


def _migration(body: dict[str, Any], lang: str) -> str:
    return _t(
        lang,
        f"Migration {body.get('id')} on {body.get('datasource')}: {body.get('status')}.",
        f"Миграция {body.get('id')} в {body.get('datasource')}: {body.get('status')}.",
    )


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _sql(body: dict[str, Any], lang: str) -> str:
    """The row count and the first rows as a markdown table (not Python lists)."""
    rows, columns = body.get("rows", []), body.get("columns", [])
    head = _t(
        lang,
        f"The query returned {body.get('row_count', len(rows))} row(s).",
        f"Запрос вернул строк: {body.get('row_count', len(rows))}.",
    )
    if not columns or not rows:
        return head
    table = ["| " + " | ".join(_cell(c) for c in columns) + " |"]
    table.append("|" + "---|" * len(columns))
    table += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows[:MAX_LINES]]
    more = len(rows) - MAX_LINES
    tail = [_t(lang, f"… and {more} more.", f"… и ещё {more}.")] if more > 0 else []
    return "\n".join([head, "", *table, *tail])


def _file(body: dict[str, Any], lang: str) -> str:
    content = str(body.get("content", ""))
    preview = content[:300] + ("…" if len(content) > 300 else "")
    return _t(lang, f"File {body.get('key')}:", f"Файл {body.get('key')}:") + "\n" + preview


def _generic(body: Any, lang: str) -> str:
    text = json.dumps(body, ensure_ascii=False, default=str)
    return _t(lang, "Result: ", "Результат: ") + text[:400]


SUMMARIES: dict[str, Callable[[dict[str, Any], str], str]] = {
    "search_dashboards": _dashboards,
    "get_dashboard": _dashboard,
    "dashboard_health": _health,
    "create_branch": _branch,
    "commit_changes": _commit,
    "deploy_dashboard": _deploy,
    "execute_migration": _migration,
    "list_tables": _tables,
    "get_table_schema": _columns,
    "execute_sql": _sql,
    "list_files": _listing("Files", "Файлов"),
    "read_file": _file,
    "lookup_knowledge": _listing("Articles found", "Найдено статей"),
    "query_logs": _listing("Log entries", "Записей в логах"),
}


REFUSALS_RU = {
    "VALIDATION_FAILED": "эта версия не проходит проверку, развёртывание отклонено",
    "FORBIDDEN": "недостаточно прав для этого действия",
    "NOT_FOUND": "не найдено",
    "SUPERSET_NO_DATABASE": "в целевом Superset нет базы данных с таким именем",
    "SUPERSET_UNAVAILABLE": "Superset не отвечает",
    "BACKEND_UNAVAILABLE": "сервис недоступен",
    "CONFLICT": "конфликт с текущим состоянием",
}


def _message(error: dict[str, Any], lang: str) -> str:
    """A tool's refusal in the person's language: Russian words for the codes people meet."""
    template = REFUSALS_RU.get(str(error.get("code"))) if lang == "ru" else None
    if template is None:
        return str(error.get("message", ""))
    details = error.get("details") if isinstance(error.get("details"), dict) else {}
    return template.format_map(_Lenient(details or {}))


class _Lenient(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


def summary(tool: str, content: str, *, failed: bool, lang: str) -> str:
    """One tool result in a sentence or a few lines (without the label)."""
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if body is None and content.startswith("User rejected"):
        return _t(
            lang,
            f"You rejected {tool}, so nothing was changed.",
            f"Вы отклонили {tool}, ничего не изменено.",
        )
    if body is None and not failed:
        return f"{tool}: {content[:400]}"
    if failed or body is None or (isinstance(body, dict) and "error" in body):
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            detail = f"{error.get('code', 'ERROR')}: {_message(error, lang)}"
        else:
            detail = str(error or content)[:400]
        return _t(lang, f"{tool} failed ({detail}).", f"{tool} не выполнен ({detail}).")
    render = SUMMARIES.get(tool)
    if render is None or not isinstance(body, dict):
        return _generic(body, lang)
    return render(body, lang)
