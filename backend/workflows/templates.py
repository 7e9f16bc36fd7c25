"""Static checks of workflow templates at start-up: syntax, names, step references, filters.

The agent renders the templates (jinja2's SandboxedEnvironment with StrictUndefined); the checks
here refuse at start-up what could never render: a syntax error, a name other than the context's
(`input`, `steps`, `now`, `today`), a reference to a step that does not run before, a filter or
test jinja2 and the agent do not provide. What depends on data (a field a tool result lacks,
`__class__`) fails the step at run time, in the sandbox.
"""

from __future__ import annotations

from jinja2 import StrictUndefined, TemplateSyntaxError, meta, nodes
from jinja2.sandbox import SandboxedEnvironment

CONTEXT_NAMES = frozenset({"input", "steps", "now", "today"})
# Filters the agent adds to jinja2's own (agent/workflows/templates.py; pinned by a test).
EXTRA_FILTERS = frozenset({"number", "table_ref"})

_ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
_ENV.filters.update({name: str for name in EXTRA_FILTERS})  # names only: the agent renders


def check(source: str, *, earlier_steps: frozenset[str]) -> None:
    """Raise ValueError naming the first problem of template `source`."""
    try:
        ast = _ENV.parse(source)
    except TemplateSyntaxError as exc:
        raise ValueError(f"template syntax error on line {exc.lineno}: {exc.message}") from exc
    for node in ast.find_all(nodes.Filter):
        if node.name not in _ENV.filters:
            raise ValueError(f"there is no filter named {node.name!r}")
    for test in ast.find_all(nodes.Test):
        if test.name not in _ENV.tests:
            raise ValueError(f"there is no test named {test.name!r}")
    # (after the filter check: finding the names compiles the template, which needs them)
    unknown = meta.find_undeclared_variables(ast) - CONTEXT_NAMES
    if unknown:
        names = ", ".join(sorted(unknown))
        raise ValueError(f"unknown name(s) {names}; templates can use {_names()}")
    for name in sorted(_step_references(ast) - earlier_steps):
        raise ValueError(f"steps.{name} is not a step that runs before this one")


def _step_references(ast: nodes.Template) -> set[str]:
    found: set[str] = set()
    for node in ast.find_all((nodes.Getattr, nodes.Getitem)):
        if isinstance(node, nodes.Getattr) and _is_steps(node.node):
            found.add(node.attr)
        elif (
            isinstance(node, nodes.Getitem)
            and _is_steps(node.node)
            and isinstance(node.arg, nodes.Const)
            and isinstance(node.arg.value, str)
        ):
            found.add(node.arg.value)
    return found


def _is_steps(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Name) and node.name == "steps"


def _names() -> str:
    return ", ".join(sorted(CONTEXT_NAMES))
