"""conversation search: full-text GIN indexes on titles and message text

Revision ID: 0007_conversation_search
Revises: 0006_workflows
Create Date: 2026-12-01
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007_conversation_search"
down_revision: str | Sequence[str] | None = "0006_workflows"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The same expressions as backend.conversations.models.search_vector: a query uses the index
# only when it repeats the indexed expression exactly.
INDEXES = (
    ("ix_agent_conversations_title_search", "agent_conversations", "title"),
    ("ix_agent_messages_content_search", "agent_messages", "content"),
)


def upgrade() -> None:
    for name, table, column in INDEXES:
        op.execute(
            f"CREATE INDEX {name} ON {table} USING gin (to_tsvector('simple'::regconfig, {column}))"
        )


def downgrade() -> None:
    for name, _table, _column in reversed(INDEXES):
        op.execute(f"DROP INDEX IF EXISTS {name}")
