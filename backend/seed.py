"""`agent-chat seed`: demo users, the agent's service client, and each domain's demo data."""

from __future__ import annotations

import logging

from backend import db
from backend.auth import service as auth_service
from backend.config import Settings
from backend.dashboards.seed import seed as seed_dashboards
from backend.datasources.seed import seed as seed_datasources
from backend.knowledge.seed import seed as seed_knowledge
from backend.oplogs.seed import seed as seed_oplogs
from backend.storage.seed import seed as seed_storage

log = logging.getLogger("backend.seed")

DEMO_USERS = {"admin": ["admin"], "editor": ["editor"], "viewer": ["viewer"]}
# Order matters: dashboards validate against datasources; logs may reference dashboards.
DOMAIN_SEEDERS = (seed_datasources, seed_storage, seed_dashboards, seed_oplogs, seed_knowledge)


async def run(settings: Settings, database_url: str) -> None:
    engine = db.create_engine(database_url, pool_size=2)
    factory = db.session_factory(engine)
    try:
        async with factory() as session:
            for username, roles in DEMO_USERS.items():
                password = settings.seed_password(username)
                if password is None:
                    log.warning(
                        "SEED_%s_PASSWORD unset: demo user %s skipped", username.upper(), username
                    )
                    continue
                await auth_service.upsert_user(
                    session=session, username=username, password=password, roles=roles
                )
            assert settings.agent_client_secret is not None
            await auth_service.upsert_service_client(
                session=session,
                client_id=settings.agent_client_id,
                secret=settings.agent_client_secret.get_secret_value(),
            )
            await session.commit()
            for seeder in DOMAIN_SEEDERS:
                await seeder(session=session, settings=settings)
                await session.commit()
    finally:
        await engine.dispose()
