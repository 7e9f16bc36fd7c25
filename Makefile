# The two commands that matter: `make run` (the product) and `make test` (the suite).
SHELL := /bin/bash
UV := $(shell command -v uv 2>/dev/null || echo "$(HOME)/.local/bin/uv")
# Test workers (pytest-xdist): most tests wait on processes, so 3 on two cores; 0 runs serially.
PYTEST_WORKERS ?= 3

.PHONY: run test install lint typecheck check bench fmt frontend-deps frontend-check frontend-build api-types oidc-deps

$(UV):
	python3 -m pip install --user --quiet "uv>=0.5"

# --compile-bytecode: machines that set PYTHONDONTWRITEBYTECODE (this one does) would otherwise
# compile every library again in each process the suite starts (an agent's start: 8.4 s -> 4.2 s).
install: $(UV)
	$(UV) sync --frozen --compile-bytecode

run: install
	$(UV) run agent-chat up

lint: install
	$(UV) run ruff check .
	$(UV) run ruff format --check .
	$(UV) run lint-imports

typecheck: install
	$(UV) run mypy

check: lint typecheck frontend-check

# Groups (a module, or a suite sharing one private stack) and their order: tests/support/groups.py.
test: check frontend-build oidc-deps
	$(UV) run python -m compileall -q -j0 agent agent_chat backend common tests bench >/dev/null
	$(UV) run pytest -n $(PYTEST_WORKERS) --dist loadgroup --durations=15

fmt: install
	$(UV) run ruff format .
	$(UV) run ruff check --fix .

# The browser client (Node 20): locked install, type check + unit tests, production build.
frontend/node_modules/.package-lock.json: frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund

frontend-deps: frontend/node_modules/.package-lock.json

# The test OpenID provider (npm oidc-provider on Node 20) of the sign-in tests.
tests/support/oidc/node_modules/.package-lock.json: tests/support/oidc/package-lock.json
	cd tests/support/oidc && npm ci --no-audit --no-fund

oidc-deps: tests/support/oidc/node_modules/.package-lock.json

frontend-check: frontend-deps
	cd frontend && npm run check && npm test

frontend-build: frontend-deps
	cd frontend && npm run build

# Regenerate frontend/src/lib/api/schema.d.ts after changing the backend's API, and
# frontend/src/lib/codes.ts after changing the agent's stream codes (agent/errors.py) or tools.
api-types: install frontend-deps
	$(UV) run python frontend/scripts/gen_api.py
	$(UV) run python frontend/scripts/gen_codes.py

bench: install
	$(UV) run python bench/backend_lists.py
