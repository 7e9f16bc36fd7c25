"""Knowledge base read models."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

HIGHLIGHT_START = "**"
HIGHLIGHT_STOP = "**"


class Lang(StrEnum):
    ru = "ru"
    en = "en"


class ArticleSummary(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    slug: str
    lang: Lang
    title: str
    tags: list[str]


class ArticleRead(ArticleSummary):
    body: str = Field(description="Markdown")
    created_at: datetime
    updated_at: datetime


class ArticleList(BaseModel):
    items: list[ArticleSummary]
    total: int


class SearchHit(BaseModel):
    id: int
    slug: str
    title: str
    lang: Lang
    snippet: str = Field(
        description=(
            "Plain text around the matches (markdown markup removed); matched words are "
            f"wrapped in {HIGHLIGHT_START}...{HIGHLIGHT_STOP}; fragments are joined by ' … '"
        )
    )
    rank: float = Field(description="Relevance; higher is better (title matches weigh more)")


class SearchResult(BaseModel):
    items: list[SearchHit]
