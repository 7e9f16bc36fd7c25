"""sign-in through the organisation: user source and external key, OIDC logins, login codes

Revision ID: 0046_sso
Revises: 0043_idempotency_keys
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0046_sso"
down_revision: str | Sequence[str] | None = "0043_idempotency_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "users", sa.Column("source", sa.String(8), nullable=False, server_default="local")
    )
    op.add_column("users", sa.Column("external_issuer", sa.String(255), nullable=True))
    op.add_column("users", sa.Column("external_subject", sa.String(1024), nullable=True))
    op.add_column("users", sa.Column("last_sign_in_at", sa.DateTime(timezone=True), nullable=True))
    op.create_unique_constraint(
        op.f("uq_users_external_issuer"), "users", ["external_issuer", "external_subject"]
    )
    op.create_table(
        "oidc_logins",
        sa.Column("state_hash", sa.String(64), nullable=False),
        sa.Column("browser_hash", sa.String(64), nullable=False),
        sa.Column("nonce", sa.String(128), nullable=False),
        sa.Column("code_verifier", sa.String(128), nullable=False),
        sa.Column("redirect_uri", sa.String(2048), nullable=False),
        sa.Column("next_path", sa.String(2048), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("state_hash", name=op.f("pk_oidc_logins")),
    )
    op.create_table(
        "login_codes",
        sa.Column("code_hash", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_login_codes_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("code_hash", name=op.f("pk_login_codes")),
    )


def downgrade() -> None:
    op.drop_table("login_codes")
    op.drop_table("oidc_logins")
    op.drop_constraint(op.f("uq_users_external_issuer"), "users", type_="unique")
    for column in ("last_sign_in_at", "external_subject", "external_issuer", "source"):
        op.drop_column("users", column)
