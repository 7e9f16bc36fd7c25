"""The demo dashboards over the `sample` datasource. Most are healthy; 17 selects a column the
events table does not have, 23 reads a table that only exists after a pending datasource
migration, and 29 has a chart that returns no rows (a warning)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DemoDashboard:
    id: int
    title: str
    description: str
    tags: list[str]
    owner: str
    charts: list[dict[str, Any]]


def chart(key: str, title: str, type_: str, sql: str, expected: list[str]) -> dict[str, Any]:
    return {
        "key": key,
        "title": title,
        "type": type_,
        "datasource": "sample",
        "sql": " ".join(sql.split()),
        "expected_columns": expected,
    }


REVENUE_BY_MONTH = """SELECT strftime('%Y-%m', order_date) AS month,
  ROUND(SUM(total_amount), 2) AS revenue FROM orders WHERE status <> 'cancelled'
  GROUP BY month ORDER BY month"""
TOP_PRODUCTS = """SELECT p.name AS product, SUM(oi.quantity) AS units,
  ROUND(SUM(oi.quantity * oi.unit_price), 2) AS revenue
  FROM order_items oi JOIN products p ON p.id = oi.product_id
  GROUP BY p.id, p.name ORDER BY revenue DESC LIMIT 10"""
ORDERS_BY_STATUS = (
    "SELECT status, COUNT(*) AS orders FROM orders GROUP BY status ORDER BY orders DESC"
)
REVENUE_BY_CATEGORY = """SELECT p.category, ROUND(SUM(oi.quantity * oi.unit_price), 2) AS revenue
  FROM order_items oi JOIN products p ON p.id = oi.product_id
  GROUP BY p.category ORDER BY revenue DESC"""
BROKEN_CONVERSIONS = """SELECT campaign_id, COUNT(*) AS conversions FROM events
  WHERE event_type = 'purchase' GROUP BY campaign_id ORDER BY conversions DESC"""
STOCK_ON_HAND = """SELECT p.name AS product, s.on_hand, s.reserved,
  s.on_hand - s.reserved AS available
  FROM inventory_snapshots s JOIN products p ON p.id = s.product_id
  WHERE s.snapshot_date = (SELECT MAX(snapshot_date) FROM inventory_snapshots)
  ORDER BY available LIMIT 20"""
STOCK_TREND = """SELECT snapshot_date, SUM(on_hand) AS on_hand, SUM(reserved) AS reserved
  FROM inventory_snapshots GROUP BY snapshot_date ORDER BY snapshot_date"""

DASHBOARDS: list[DemoDashboard] = [
    DemoDashboard(
        42,
        "Sales overview",
        "Revenue, top products and order statuses across the shop.",
        ["sales", "revenue", "продажи"],
        "anna.petrova",
        [
            chart(
                "revenue_by_month",
                "Revenue by month",
                "line",
                REVENUE_BY_MONTH,
                ["month", "revenue"],
            ),
            chart(
                "top_products", "Top products", "bar", TOP_PRODUCTS, ["product", "units", "revenue"]
            ),
            chart(
                "orders_by_status",
                "Orders by status",
                "pie",
                ORDERS_BY_STATUS,
                ["status", "orders"],
            ),
            chart(
                "revenue_by_category",
                "Revenue by category",
                "bar",
                REVENUE_BY_CATEGORY,
                ["category", "revenue"],
            ),
        ],
    ),
    DemoDashboard(
        17,
        "Marketing funnel",
        "Events, traffic sources and conversions by campaign.",
        ["marketing", "funnel", "маркетинг", "campaigns"],
        "mark.olsen",
        [
            chart(
                "events_by_type",
                "Events by type",
                "bar",
                "SELECT event_type, COUNT(*) AS events FROM events GROUP BY event_type "
                "ORDER BY events DESC",
                ["event_type", "events"],
            ),
            chart(
                "visitors_by_source",
                "Visitors by source",
                "pie",
                "SELECT utm_source, COUNT(DISTINCT customer_id) AS visitors FROM events "
                "GROUP BY utm_source ORDER BY visitors DESC",
                ["utm_source", "visitors"],
            ),
            chart(
                "conversions_by_campaign",
                "Conversions by campaign",
                "bar",
                BROKEN_CONVERSIONS,
                ["campaign_id", "conversions"],
            ),
        ],
    ),
    DemoDashboard(
        23,
        "Inventory health",
        "Остатки на складе: stock on hand, reserved units and "
        "the weekly trend from inventory snapshots.",
        ["inventory", "склад", "operations"],
        "ivan.sokolov",
        [
            chart(
                "stock_on_hand",
                "Stock on hand",
                "table",
                STOCK_ON_HAND,
                ["product", "on_hand", "reserved", "available"],
            ),
            chart(
                "stock_trend",
                "Stock trend",
                "line",
                STOCK_TREND,
                ["snapshot_date", "on_hand", "reserved"],
            ),
        ],
    ),
    DemoDashboard(
        3,
        "Продажи по регионам",
        "Выручка и заказы по странам покупателей.",
        ["продажи", "регионы", "sales"],
        "anna.petrova",
        [
            chart(
                "revenue_by_country",
                "Выручка по странам",
                "bar",
                "SELECT c.country, ROUND(SUM(o.total_amount), 2) AS revenue, COUNT(*) AS orders "
                "FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.country "
                "ORDER BY revenue DESC",
                ["country", "revenue", "orders"],
            ),
            chart(
                "customers_by_country",
                "Покупатели по странам",
                "pie",
                "SELECT country, COUNT(*) AS customers FROM customers GROUP BY country "
                "ORDER BY customers DESC",
                ["country", "customers"],
            ),
        ],
    ),
    DemoDashboard(
        5,
        "Customer segments",
        "How segments differ in size and spend.",
        ["customers", "segments", "клиенты"],
        "mark.olsen",
        [
            chart(
                "customers_by_segment",
                "Customers by segment",
                "pie",
                "SELECT segment, COUNT(*) AS customers FROM customers GROUP BY segment",
                ["segment", "customers"],
            ),
            chart(
                "revenue_by_segment",
                "Revenue by segment",
                "bar",
                "SELECT c.segment, ROUND(SUM(o.total_amount), 2) AS revenue FROM orders o "
                "JOIN customers c ON c.id = o.customer_id GROUP BY c.segment",
                ["segment", "revenue"],
            ),
        ],
    ),
    DemoDashboard(
        8,
        "Каталог товаров",
        "Product catalogue: assortment and prices by category.",
        ["products", "каталог", "pricing"],
        "ivan.sokolov",
        [
            chart(
                "products_by_category",
                "Товары по категориям",
                "bar",
                "SELECT category, COUNT(*) AS products FROM products GROUP BY category",
                ["category", "products"],
            ),
            chart(
                "price_by_category",
                "Цены по категориям",
                "table",
                "SELECT category, MIN(price) AS min_price, ROUND(AVG(price), 2) AS avg_price, "
                "MAX(price) AS max_price FROM products GROUP BY category",
                ["category", "min_price", "avg_price", "max_price"],
            ),
        ],
    ),
    DemoDashboard(
        11,
        "Executive KPIs",
        "Ключевые показатели: revenue, orders, customers, AOV.",
        ["kpi", "executive", "показатели"],
        "anna.petrova",
        [
            chart(
                "total_revenue",
                "Total revenue",
                "number",
                "SELECT ROUND(SUM(total_amount), 2) AS revenue FROM orders",
                ["revenue"],
            ),
            chart(
                "total_orders",
                "Orders",
                "number",
                "SELECT COUNT(*) AS orders FROM orders",
                ["orders"],
            ),
            chart(
                "total_customers",
                "Customers",
                "number",
                "SELECT COUNT(*) AS customers FROM customers",
                ["customers"],
            ),
        ],
    ),
    DemoDashboard(
        29,
        "Возвраты и отмены",
        "Returns and cancellations: cancelled orders by month and chargebacks.",
        ["returns", "возвраты", "finance"],
        "olga.ivanova",
        [
            chart(
                "cancelled_by_month",
                "Отмены по месяцам",
                "line",
                "SELECT strftime('%Y-%m', order_date) AS month, COUNT(*) AS cancelled FROM orders "
                "WHERE status = 'cancelled' GROUP BY month ORDER BY month",
                ["month", "cancelled"],
            ),
            chart(
                "chargebacks",
                "Chargebacks",
                "table",
                "SELECT id, order_date, total_amount FROM orders WHERE status = 'chargeback'",
                ["id", "order_date", "total_amount"],
            ),
        ],
    ),
    DemoDashboard(
        31,
        "Web traffic sources",
        "Источники трафика: events by UTM source and day.",
        ["traffic", "utm", "трафик", "marketing"],
        "mark.olsen",
        [
            chart(
                "events_by_source",
                "Events by source",
                "bar",
                "SELECT utm_source, COUNT(*) AS events FROM events GROUP BY utm_source "
                "ORDER BY events DESC",
                ["utm_source", "events"],
            ),
            chart(
                "events_by_day",
                "Events by day",
                "line",
                "SELECT date(occurred_at) AS day, COUNT(*) AS events FROM events GROUP BY day "
                "ORDER BY day",
                ["day", "events"],
            ),
        ],
    ),
    DemoDashboard(
        50,
        "Удержание клиентов",
        "Customer retention: new and repeat customers.",
        ["retention", "удержание", "customers"],
        "olga.ivanova",
        [
            chart(
                "new_customers_by_month",
                "Новые клиенты по месяцам",
                "line",
                "SELECT strftime('%Y-%m', created_at) AS month, COUNT(*) AS customers "
                "FROM customers GROUP BY month ORDER BY month",
                ["month", "customers"],
            ),
            chart(
                "repeat_customers",
                "Повторные покупатели",
                "number",
                "SELECT COUNT(*) AS repeat_customers FROM (SELECT customer_id FROM orders "
                "GROUP BY customer_id HAVING COUNT(*) > 1)",
                ["repeat_customers"],
            ),
        ],
    ),
    DemoDashboard(
        58,
        "Средний чек",
        "Average order value by segment and by month.",
        ["aov", "средний чек", "sales"],
        "anna.petrova",
        [
            chart(
                "aov_by_segment",
                "Средний чек по сегментам",
                "bar",
                "SELECT c.segment, ROUND(AVG(o.total_amount), 2) AS aov FROM orders o "
                "JOIN customers c ON c.id = o.customer_id GROUP BY c.segment",
                ["segment", "aov"],
            ),
            chart(
                "aov_by_month",
                "Средний чек по месяцам",
                "line",
                "SELECT strftime('%Y-%m', order_date) AS month, ROUND(AVG(total_amount), 2) AS aov "
                "FROM orders GROUP BY month ORDER BY month",
                ["month", "aov"],
            ),
        ],
    ),
    DemoDashboard(
        64,
        "Daily orders monitor",
        "Ежедневный мониторинг заказов за последние 30 дней.",
        ["orders", "monitoring", "заказы"],
        "ivan.sokolov",
        [
            chart(
                "orders_last_30_days",
                "Orders, last 30 days",
                "line",
                "SELECT date(order_date) AS day, COUNT(*) AS orders FROM orders "
                "WHERE order_date >= date((SELECT MAX(order_date) FROM orders), '-30 days') "
                "GROUP BY day ORDER BY day",
                ["day", "orders"],
            ),
        ],
    ),
]
