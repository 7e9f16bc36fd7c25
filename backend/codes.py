"""The backend's view of the one code list (common/codes.py): `Code` for its modules.

Every `AppError`, every part error of a run's end, every code stored in a row (a workflow step's
error, an audit trail's failure) names a member of `Code`, one of those the backend writes
(`BACKEND`; tests/agent/unit/test_codes.py checks each `Code.X` in backend/ against it); the
literal is spelled nowhere in backend/ (apart from the data its migrations carry). The agent
reads some of these codes over HTTP (agent/errors.py `BACKEND_CODES`), and the browser's list
(frontend/src/lib/codes.ts) has every one.
"""

from __future__ import annotations

from common.codes import BACKEND, Code

__all__ = ["BACKEND", "Code"]
