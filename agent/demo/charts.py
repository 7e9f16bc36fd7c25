"""Answers with a chart: "show revenue by month as a chart" runs a known query on the demo
datasource with execute_sql, and the summary carries a ```chart block built from the rows the
tool returned (the answer-part format of docs/api.md, drawn by the client)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolMessage

from agent.demo.request import DEFAULT_DATASOURCE, Call, Request, parse_json

# Asking for a chart, not talking about a dashboard's charts ("the revenue chart on dashboard 42").
CHART_WORDS = re.compile(
    r"\bas an? (chart|graph|plot|diagram)\b|\b(chart|graph|plot) of\b|\b(plot|draw|visuali[sz]e)\b"
    r"|графиком|диаграмм|нарисуй|построй|визуализ|график (выручк|заказ|продаж)"
)
MAX_ROWS = 500


@dataclass(frozen=True)
class Known:
    """A question the demo model can chart: words to look for, the query, how to draw it."""

    pattern: str
    kind: str
    title_en: str
    title_ru: str
    sql: str


KNOWN: tuple[Known, ...] = (
    Known(
        r"(revenue|sales|выручк|продаж).*(month|месяц)|(month|месяц).*(revenue|sales|выручк|продаж)",
        "line",
        "Revenue by month",
        "Выручка по месяцам",
        "SELECT strftime('%Y-%m', order_date) AS month, ROUND(SUM(total_amount), 2) AS revenue "
        "FROM orders WHERE status <> 'cancelled' GROUP BY month ORDER BY month",
    ),
    Known(
        r"(orders?|заказ).*(month|месяц)|(month|месяц).*(orders?|заказ)",
        "line",
        "Orders by month",
        "Заказы по месяцам",
        "SELECT strftime('%Y-%m', order_date) AS month, COUNT(*) AS orders FROM orders "
        "GROUP BY month ORDER BY month",
    ),
    Known(
        r"(revenue|sales|выручк|продаж).*(categor|категор)|(categor|категор).*(revenue|выручк)",
        "bar",
        "Revenue by category",
        "Выручка по категориям",
        "SELECT p.category, ROUND(SUM(oi.quantity * oi.unit_price), 2) AS revenue "
        "FROM order_items oi JOIN products p ON p.id = oi.product_id "
        "GROUP BY p.category ORDER BY revenue DESC",
    ),
    Known(
        r"(orders?|заказ).*(status|статус)|(status|статус).*(orders?|заказ)",
        "pie",
        "Orders by status",
        "Заказы по статусам",
        "SELECT status, COUNT(*) AS orders FROM orders GROUP BY status ORDER BY orders DESC",
    ),
)


def requested(text: str) -> Known | None:
    """The known chart a (lowercased) request asks for, if it asks for a chart at all."""
    if CHART_WORDS.search(text) is None:
        return None
    return next((k for k in KNOWN if re.search(k.pattern, text)), None)


def route(req: Request) -> Call | None:
    """A chart request about data (not about a named dashboard's charts) runs its query."""
    if req.explicit_id is not None:
        return None
    known = requested(req.text)
    if known is None:
        return None
    return Call("execute_sql", {"datasource": DEFAULT_DATASOURCE, "query": known.sql})


def block(body: dict[str, Any], known: Known, lang: str) -> str | None:
    """The ```chart block of an execute_sql result, or None when there is nothing to draw."""
    columns, rows = body.get("columns"), body.get("rows")
    if not isinstance(columns, list) or not isinstance(rows, list) or not rows:
        return None
    spec = {
        "kind": known.kind,
        "title": known.title_ru if lang == "ru" else known.title_en,
        "columns": [str(c) for c in columns],
        "rows": rows[:MAX_ROWS],
    }
    return "```chart\n" + json.dumps(spec, ensure_ascii=False) + "\n```"


def for_results(results: Sequence[ToolMessage], text: str, lang: str) -> str | None:
    """The answer to a chart request `text`: a sentence and the chart block drawn from this
    round's execute_sql rows; None when it did not ask for a chart or there is nothing to draw."""
    known = requested(text.lower())
    sql = [m for m in results if m.name == "execute_sql" and m.status != "error"]
    if known is None or not sql:
        return None
    body = parse_json(sql[-1])
    drawn = block(body, known, lang) if isinstance(body, dict) else None
    if drawn is None:
        return None
    count = len(body["rows"])
    title = known.title_ru if lang == "ru" else known.title_en
    sentence = (
        f"«{title}»: строк в запросе — {count}, график ниже."
        if lang == "ru"
        else f"{title}: {count} rows from the query, drawn below."
    )
    return sentence + "\n\n" + drawn
