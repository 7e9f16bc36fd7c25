"""The suite's warning filters (pyproject.toml, [tool.pytest.ini_options] filterwarnings): a
DeprecationWarning that names one of our modules fails the test; one a library raises about
its own code is ignored."""

from __future__ import annotations

import warnings

import pytest


def _deprecated(module: str) -> None:
    warnings.warn_explicit("old", DeprecationWarning, f"{module}.py", 1, module=module)


@pytest.mark.parametrize("module", ["agent.runs.skeleton", "backend.main", "common", "tests.x"])
def test_a_deprecation_in_our_code_fails(module):
    with pytest.raises(DeprecationWarning):
        _deprecated(module)


@pytest.mark.parametrize("module", ["langgraph.pregel", "websockets.legacy", "agentic"])
def test_a_librarys_own_deprecation_is_ignored(module):
    _deprecated(module)  # no error


def test_any_other_warning_still_fails():
    with pytest.raises(UserWarning):
        warnings.warn_explicit("odd", UserWarning, "langgraph/x.py", 1, module="langgraph.x")
