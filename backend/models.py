"""Imports every ORM module so Base.metadata is complete (Alembic, tests)."""

from backend.attachments import models as attachment_models
from backend.audit import models as audit_models
from backend.auth import models as sign_in_models
from backend.conversations import models as conversation_models
from backend.dashboards import models as dashboard_models
from backend.datasources import models as datasource_models
from backend.db import Base
from backend.debug import models as debug_models
from backend.feedback import models as feedback_models
from backend.idempotency import models as idempotency_models
from backend.identity import access_tokens as access_token_models
from backend.identity import models as auth_models
from backend.knowledge import models as knowledge_models
from backend.mcp_tools import models as mcp_models
from backend.oplogs import models as oplog_models
from backend.schedules import models as schedule_models
from backend.sharing import models as sharing_models
from backend.storage import models as storage_models
from backend.superset import models as superset_models
from backend.usage import models as usage_models
from backend.workflows import models as workflow_models

__all__ = [
    "Base",
    "access_token_models",
    "attachment_models",
    "audit_models",
    "auth_models",
    "conversation_models",
    "dashboard_models",
    "datasource_models",
    "debug_models",
    "feedback_models",
    "idempotency_models",
    "knowledge_models",
    "mcp_models",
    "oplog_models",
    "schedule_models",
    "sharing_models",
    "sign_in_models",
    "storage_models",
    "superset_models",
    "usage_models",
    "workflow_models",
]
