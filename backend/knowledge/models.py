"""Runbook articles in Russian and English, searchable with Postgres full-text search."""

from __future__ import annotations

from typing import Any

from sqlalchemy import CheckConstraint, Computed, Identity, Index, Integer, String, Text
from sqlalchemy.dialects.postgresql import ARRAY, TSVECTOR
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, Timestamped

LANGS = ("ru", "en")

# Each row is stemmed in its own language ('russian' also stems Latin words the English way);
# the title weighs more than the body.
_CONFIG = (
    "CASE WHEN ((lang)::text = 'ru'::text) THEN 'russian'::regconfig ELSE 'english'::regconfig END"
)
SEARCH_SQL = (
    f"setweight(to_tsvector({_CONFIG}, (title)::text), 'A'::\"char\") "
    f"|| setweight(to_tsvector({_CONFIG}, body), 'B'::\"char\")"
)


class KnowledgeArticle(Timestamped, Base):
    __tablename__ = "knowledge_articles"
    __table_args__ = (
        CheckConstraint("lang IN ('ru', 'en')", name="lang"),
        Index("ix_knowledge_articles_search", "search", postgresql_using="gin"),
    )

    id: Mapped[int] = mapped_column(Integer, Identity(), primary_key=True)
    slug: Mapped[str] = mapped_column(String(120), unique=True)
    lang: Mapped[str] = mapped_column(String(2))
    title: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    tags: Mapped[list[str]] = mapped_column(ARRAY(String(40)), default=list)
    search: Mapped[Any] = mapped_column(
        TSVECTOR, Computed(SEARCH_SQL, persisted=True), deferred=True
    )
