"""The demo shop's rows, generated deterministically (random.Random(42)).

Deliberately absent, because demo dashboards and migrations rely on it: `events` has no
`campaign_id` column, and there is no `inventory_snapshots` table until its migration runs.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from typing import Any

SCHEMA = """
CREATE TABLE customers (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE,
    country TEXT NOT NULL, segment TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE products (
    id INTEGER PRIMARY KEY, sku TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
    category TEXT NOT NULL, price REAL NOT NULL);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
    order_date TEXT NOT NULL, status TEXT NOT NULL, total_amount REAL NOT NULL);
CREATE TABLE order_items (
    id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL, unit_price REAL NOT NULL);
CREATE TABLE events (
    id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
    event_type TEXT NOT NULL, occurred_at TEXT NOT NULL, utm_source TEXT, utm_campaign TEXT);
CREATE INDEX ix_orders_customer_id ON orders(customer_id);
CREATE INDEX ix_order_items_order_id ON order_items(order_id);
CREATE INDEX ix_events_customer_id ON events(customer_id);
"""

CUSTOMERS, PRODUCTS, ORDERS, EVENTS = 1000, 100, 5000, 8000
START, END = date(2025, 1, 1), date(2026, 10, 31)

FIRST = "Anna Ben Carla David Elena Farid Greta Hugo Ines Jonas Kira Liam Mia Noah Olga Pavel "
FIRST += "Quinn Rosa Sven Tara Umar Vera Wim Xenia Yusuf Zoe"
LAST = "Ivanova Smith Garcia Muller Rossi Novak Jensen Silva Kowalski Dubois Tanaka Brown "
LAST += "Petrov Costa Berg Larsen Moreau Fischer Nowak Olsen"
COUNTRIES = {"US": 30, "GB": 12, "DE": 12, "FR": 9, "NL": 6, "ES": 6, "PL": 5, "SE": 4}
COUNTRIES |= {"CA": 6, "BR": 4, "IN": 3, "JP": 3}
SEGMENTS = {"consumer": 70, "smb": 22, "enterprise": 8}
CATEGORIES = {
    "Electronics": (["Headphones", "Charger", "Speaker", "Monitor", "Keyboard"], 25, 900),
    "Home": (["Lamp", "Kettle", "Blanket", "Mug Set", "Clock"], 8, 180),
    "Garden": (["Hose", "Planter", "Shears", "Seed Kit", "Lantern"], 5, 140),
    "Sports": (["Yoga Mat", "Dumbbell", "Bottle", "Backpack", "Jump Rope"], 6, 220),
    "Books": (["Cookbook", "Novel", "Atlas", "Guide", "Journal"], 4, 60),
    "Toys": (["Puzzle", "Robot Kit", "Board Game", "Plush Bear", "Kite"], 5, 120),
    "Beauty": (["Face Cream", "Shampoo", "Perfume", "Lip Balm", "Soap Bar"], 3, 110),
}
ADJECTIVES = ["Classic", "Compact", "Deluxe", "Eco", "Pro", "Smart", "Travel", "Ultra"]
STATUSES = {"completed": 78, "shipped": 8, "pending": 5, "cancelled": 6, "refunded": 3}
EVENT_TYPES = {"page_view": 55, "add_to_cart": 18, "checkout_started": 10, "purchase": 9}
EVENT_TYPES |= {"signup": 5, "newsletter_click": 3}
CAMPAIGNS = {
    "google": ["brand_search", "generic_search", "shopping_ads"],
    "newsletter": ["weekly_digest", "black_friday_2025", "spring_sale_2026"],
    "facebook": ["retargeting_q3", "lookalike_2026"],
    "partner": ["affiliate_tech_blog"],
}
SOURCES = {"google": 35, "newsletter": 20, "facebook": 15, "partner": 5, "": 25}


def _pick(rng: random.Random, weights: dict[str, int]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _moment(rng: random.Random, start: date, end: date) -> datetime:
    span = max(0, (end - start).days)
    day = start + timedelta(days=rng.randint(0, span))
    return datetime(day.year, day.month, day.day) + timedelta(seconds=rng.randint(0, 86_399))


def generate(seed: int = 42) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    """(table, rows) in insertion order; the same seed gives the same rows."""
    rng = random.Random(seed)
    first, last = FIRST.split(), LAST.split()
    customers: list[tuple[Any, ...]] = []
    for cid in range(1, CUSTOMERS + 1):
        f, s = rng.choice(first), rng.choice(last)
        joined = _moment(rng, date(2024, 6, 1), date(2026, 6, 30))
        email = f"{f}.{s}.{cid}@example.com".lower()
        customers.append(
            (
                cid,
                f"{f} {s}",
                email,
                _pick(rng, COUNTRIES),
                _pick(rng, SEGMENTS),
                joined.isoformat(),
            )
        )
    yield "customers", customers
    products = _products(rng)
    yield "products", products
    orders, items = _orders(rng, customers, products)
    yield "orders", orders
    yield "order_items", items
    yield "events", _events(rng)


def _products(rng: random.Random) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    categories = list(CATEGORIES.items())
    for pid in range(1, PRODUCTS + 1):
        category, (nouns, low, high) = categories[(pid - 1) % len(categories)]
        name = f"{rng.choice(ADJECTIVES)} {rng.choice(nouns)}"
        price = round(rng.uniform(low, high), 2)
        rows.append((pid, f"{category[:3].upper()}-{pid:04d}", name, category, price))
    return rows


def _orders(
    rng: random.Random, customers: list[tuple[Any, ...]], products: list[tuple[Any, ...]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    orders: list[tuple[Any, ...]] = []
    items: list[tuple[Any, ...]] = []
    for oid in range(1, ORDERS + 1):
        customer = rng.choice(customers)
        joined = max(date.fromisoformat(customer[5][:10]), START)
        day = _moment(rng, joined, END).date()
        total = 0.0
        for _ in range(rng.choices([1, 2, 3, 4], weights=[25, 30, 25, 20])[0]):
            product = rng.choice(products)
            quantity = rng.choices([1, 2, 3], weights=[70, 22, 8])[0]
            discount = 0.9 if rng.random() < 0.15 else 1.0
            unit_price = round(product[4] * discount, 2)
            total += quantity * unit_price
            items.append((len(items) + 1, oid, product[0], quantity, unit_price))
        orders.append((oid, customer[0], day.isoformat(), _pick(rng, STATUSES), round(total, 2)))
    return orders, items


def _events(rng: random.Random) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for eid in range(1, EVENTS + 1):
        customer_id = None if rng.random() < 0.08 else rng.randint(1, CUSTOMERS)
        source = _pick(rng, SOURCES) or None
        campaign = rng.choice(CAMPAIGNS[source]) if source else None
        at = _moment(rng, START, END).isoformat()
        rows.append((eid, customer_id, _pick(rng, EVENT_TYPES), at, source, campaign))
    return rows
