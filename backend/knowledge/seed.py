"""Demo data for knowledge: the runbooks under runbooks/, upserted by slug."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.db import utcnow
from backend.knowledge.models import LANGS, KnowledgeArticle

RUNBOOKS = Path(__file__).resolve().parent / "runbooks"


@dataclass(frozen=True)
class Runbook:
    slug: str
    lang: str
    title: str
    body: str
    tags: list[str]


def parse(path: Path) -> Runbook:
    """`<name>.<lang>.md` with a YAML front matter block holding `title` and `tags`."""
    name, lang = path.name.removesuffix(".md").rsplit(".", 1)
    if lang not in LANGS:
        raise ValueError(f"{path.name}: language must be one of {LANGS}")
    _, front, body = path.read_text(encoding="utf-8").split("---\n", 2)
    meta = yaml.safe_load(front)
    return Runbook(
        slug=f"{name}-{lang}",
        lang=lang,
        title=str(meta["title"]),
        body=body.strip() + "\n",
        tags=[str(t) for t in meta.get("tags", [])],
    )


def runbooks() -> list[Runbook]:
    return [parse(p) for p in sorted(RUNBOOKS.glob("*.md"))]


async def seed(*, session: AsyncSession, settings: Settings) -> None:
    """Idempotent: safe to run on every start; an edited runbook file updates its row."""
    for book in runbooks():
        stmt = insert(KnowledgeArticle).values(
            slug=book.slug, lang=book.lang, title=book.title, body=book.body, tags=book.tags
        )
        changed = (
            (KnowledgeArticle.title != stmt.excluded.title)
            | (KnowledgeArticle.body != stmt.excluded.body)
            | (KnowledgeArticle.tags != stmt.excluded.tags)
            | (KnowledgeArticle.lang != stmt.excluded.lang)
        )
        await session.execute(
            stmt.on_conflict_do_update(
                index_elements=[KnowledgeArticle.slug],
                set_={
                    "lang": stmt.excluded.lang,
                    "title": stmt.excluded.title,
                    "body": stmt.excluded.body,
                    "tags": stmt.excluded.tags,
                    "updated_at": utcnow(),
                },
                where=changed,
            )
        )
