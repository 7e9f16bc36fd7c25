"""Reading runbooks and ranking them against a question in Russian or English."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.errors import NotFound, Unprocessable
from backend.knowledge.models import KnowledgeArticle
from backend.knowledge.schemas import HIGHLIGHT_START, HIGHLIGHT_STOP, Lang
from backend.principal import Principal

# Each row is matched with the query parsed in the row's own language. Mode "all" needs every
# word (web-search syntax: quotes, `or`, `-word`); mode "any" turns every AND into OR, which is
# the fallback when no article has all the words. Phrases keep their <-> operators.
_SEARCH_SQL = """
WITH q AS (
    SELECT websearch_to_tsquery('russian', :q) AS ru, websearch_to_tsquery('english', :q) AS en
), qq AS (
    SELECT CASE WHEN :mode = 'any' THEN replace(ru::text, ' & ', ' | ')::tsquery ELSE ru END AS ru,
           CASE WHEN :mode = 'any' THEN replace(en::text, ' & ', ' | ')::tsquery ELSE en END AS en
    FROM q
), hits AS (
    SELECT a.id, a.slug, a.title, a.lang, a.body,
           CASE WHEN a.lang = 'ru' THEN qq.ru ELSE qq.en END AS query,
           ts_rank(a.search, CASE WHEN a.lang = 'ru' THEN qq.ru ELSE qq.en END) AS rank
    FROM knowledge_articles a CROSS JOIN qq
    WHERE ((a.lang = 'ru' AND a.search @@ qq.ru) OR (a.lang = 'en' AND a.search @@ qq.en))
      AND a.lang = ANY(:langs)
    ORDER BY rank DESC, a.id
    LIMIT :limit
)
SELECT id, slug, title, lang, rank,
       ts_headline(
           CASE WHEN lang = 'ru' THEN 'russian'::regconfig ELSE 'english'::regconfig END,
           regexp_replace(body, '[*`#>|]+', '', 'g'), query, :options
       ) AS snippet
FROM hits
ORDER BY rank DESC, id
"""

HEADLINE_OPTIONS = (
    f"StartSel={HIGHLIGHT_START}, StopSel={HIGHLIGHT_STOP}, MaxWords=35, MinWords=15, "
    'MaxFragments=2, FragmentDelimiter=" … "'
)
MAX_QUERY_LENGTH = 500


@dataclass(frozen=True)
class Hit:
    id: int
    slug: str
    title: str
    lang: str
    snippet: str
    rank: float


async def _ranked(
    session: AsyncSession, q: str, lang: Lang | None, limit: int, mode: str
) -> list[Hit]:
    params = {
        "q": q,
        "langs": [lang.value] if lang else [item.value for item in Lang],
        "limit": limit,
        "mode": mode,
        "options": HEADLINE_OPTIONS,
    }
    rows = await session.execute(text(_SEARCH_SQL), params)
    return [
        Hit(
            id=r.id,
            slug=r.slug,
            title=r.title,
            lang=r.lang,
            snippet=" ".join(r.snippet.split()),
            rank=round(float(r.rank), 6),
        )
        for r in rows
    ]


async def search(
    *,
    session: AsyncSession,
    q: str,
    lang: Lang | None,
    limit: int,
    actor: Principal | None = None,
) -> list[Hit]:
    """Best-matching articles first: all words if any article has them, else any word
    (audited within agent runs)."""
    details = {"q": q[:MAX_QUERY_LENGTH], **({"lang": lang.value} if lang else {})}
    async with audit.run_read(
        session=session, actor=actor, action="knowledge.search", details=details
    ):
        return await _search(session, q, lang, limit)


async def _search(session: AsyncSession, q: str, lang: Lang | None, limit: int) -> list[Hit]:
    question = q.strip()
    if not question:
        raise Unprocessable("q must not be blank", details={"field": "q"})
    if len(question) > MAX_QUERY_LENGTH:
        raise Unprocessable(f"q must be at most {MAX_QUERY_LENGTH} characters")
    hits = await _ranked(session, question, lang, limit, "all")
    return hits or await _ranked(session, question, lang, limit, "any")


async def get(*, session: AsyncSession, article_id: int) -> KnowledgeArticle:
    article = await session.get(KnowledgeArticle, article_id)
    if article is None:
        raise NotFound("Article not found", details={"id": article_id})
    return article


async def list_(
    *, session: AsyncSession, lang: Lang | None, limit: int, offset: int
) -> tuple[list[KnowledgeArticle], int]:
    """Articles by slug, optionally one language."""
    stmt = select(KnowledgeArticle)
    if lang is not None:
        stmt = stmt.where(KnowledgeArticle.lang == lang.value)
    total = await session.scalar(select(func.count()).select_from(stmt.subquery()))
    rows = await session.scalars(stmt.order_by(KnowledgeArticle.slug).limit(limit).offset(offset))
    return list(rows), int(total or 0)
