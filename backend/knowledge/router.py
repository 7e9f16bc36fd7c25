"""Knowledge base: runbook search and reading (viewer)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from backend.deps import Page, SessionDep, Viewer
from backend.errors import responses
from backend.knowledge import service
from backend.knowledge.schemas import (
    ArticleList,
    ArticleRead,
    ArticleSummary,
    Lang,
    SearchHit,
    SearchResult,
)

router = APIRouter(tags=["knowledge"])
MAX_RESULTS = 20

SEARCH_HELP = (
    "Runbooks ranked by relevance to `q`, best first, as `{items: [{id, slug, title, lang, "
    "snippet, rank}]}`. Russian articles are matched with Russian stemming, English ones with "
    'English stemming, so "колонка не найдена" and "missing column" both work. Articles '
    "holding every word rank first; when none holds them all, articles holding any word are "
    "returned. `q` uses web-search syntax (quotes for phrases, `or`, `-word`) and is never "
    "interpreted as SQL; a blank `q` is 422. In `snippet`, matched words are wrapped in `**`."
)


@router.get(
    "/api/knowledge/search",
    response_model=SearchResult,
    responses=responses(401, 403, 422),
    description=SEARCH_HELP,
)
async def search(
    principal: Viewer,
    session: SessionDep,
    q: Annotated[str, Query(min_length=1, max_length=500, description="the question")],
    lang: Annotated[Lang | None, Query(description="only this language")] = None,
    limit: Annotated[int, Query(ge=1, description=f"capped at {MAX_RESULTS}")] = 5,
) -> SearchResult:
    """Search runbooks."""
    hits = await service.search(
        session=session, q=q, lang=lang, limit=min(limit, MAX_RESULTS), actor=principal
    )
    return SearchResult(items=[SearchHit(**vars(h)) for h in hits])


@router.get(
    "/api/knowledge/articles", response_model=ArticleList, responses=responses(401, 403, 422)
)
async def list_articles(
    principal: Viewer, session: SessionDep, page: Page, lang: Lang | None = None
) -> ArticleList:
    """All runbooks by slug, without their bodies."""
    rows, total = await service.list_(
        session=session, lang=lang, limit=page.limit, offset=page.offset
    )
    return ArticleList(items=[ArticleSummary.model_validate(r) for r in rows], total=total)


@router.get(
    "/api/knowledge/articles/{article_id}",
    response_model=ArticleRead,
    responses=responses(401, 403, 404, 422),
)
async def get_article(
    article_id: Annotated[int, Path(ge=1, le=2_147_483_647)],
    principal: Viewer,
    session: SessionDep,
) -> ArticleRead:
    """One runbook with its markdown body."""
    article = await service.get(session=session, article_id=article_id)
    return ArticleRead.model_validate(article)
