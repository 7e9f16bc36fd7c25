"""How `pytest -n N --dist loadgroup` (make test) shares the suite among workers.

xdist's own `loadgroup` reads `xdist_group` marks by renaming node ids, which pytest 9.2 no
longer allows (the marks are ignored), so the groups are made here, from the node ids:
a module stays in one worker (its module-scoped processes start once), and each suite of
ONE_WORKER is one group (it shares one private stack: a browser behind nginx, or a Postgres
cluster a test restarts). Every worker starts its own session stack: a throwaway database,
backend and agent on free ports (tests/conftest.py, tests/support/db.py).
"""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadScopeScheduling

# tests/superset/ and tests/superset_person/ each start two real Superset instances (~350 MB
# each) once, for all their modules.
ONE_WORKER = ("tests/e2e/", "tests/faults/", "tests/superset/", "tests/superset_person/")
# In a one-worker suite's folder but with a stack of its own: a group of its own, beside it.
OWN_STACK = ("tests/faults/test_chaos_short.py",)


def group_of(nodeid: str) -> str:
    module = nodeid.split("::", 1)[0]
    if module in OWN_STACK:
        return module
    return next((suite for suite in ONE_WORKER if module.startswith(suite)), module)


def longest_first(items: list[pytest.Item]) -> None:
    """Each worker collects in this order, and groups are handed out in it: the one-worker
    suites (the longest groups by far) start at once, small modules fill in at the end."""
    items.sort(key=lambda item: not item.nodeid.startswith(ONE_WORKER))


class SuiteScheduling(LoadScopeScheduling):
    """LoadScopeScheduling with `group_of` as the scope, in collection order."""

    def __init__(self, config: pytest.Config, log: object = None) -> None:
        config.option.loadscopereorder = False  # keep longest_first's order, not test counts
        super().__init__(config, log)  # type: ignore[arg-type]

    def _split_scope(self, nodeid: str) -> str:
        return group_of(nodeid)
