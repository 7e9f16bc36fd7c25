"""The chaos soak's short mode (bench/chaos.py --short): two agents and two backends behind
nginx on a private Postgres cluster, three simulated people sending every kind of turn, random
SIGKILLs of agents and backends (restarted by the supervisor of `agent-chat up`) and Postgres
restarts; then the auditor finds no violation of the seven invariants of issue 37."""

from __future__ import annotations

import pytest

from bench import chaos
from tests.faults.support import cannot_run_postgres

pytestmark = pytest.mark.timeout(900)  # a loaded machine starts five processes slowly


@pytest.fixture(autouse=True)
def _fresh_script() -> None:
    """The soak has a stack of its own: the fault suite's shared one is not needed."""


def test_a_short_chaos_soak_breaks_no_invariant() -> None:
    if reason := cannot_run_postgres():
        pytest.skip(reason)

    result = chaos.run(chaos.SHORT)

    assert not result.crashes, result.crashes[0]
    assert result.turns >= 20  # every person got through turns of every kind
    assert result.kills + result.postgres_restarts >= 3, "the faults did not happen"
    assert sum(result.restarts.values()) >= 1  # a killed process was started again
    found = {n: v for n, v in result.violations.items() if v}
    assert not found, "\n".join(
        f"invariant {n} ({chaos.INVARIANTS[n]}): {line}" for n, v in found.items() for line in v
    )
