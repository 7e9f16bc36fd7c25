# The two commands that matter: `make run` (the product) and `make test` (the suite).
SHELL := /bin/bash
UV := $(shell command -v uv 2>/dev/null || echo "$(HOME)/.local/bin/uv")

.PHONY: run test install lint typecheck check bench fmt

$(UV):
	python3 -m pip install --user --quiet "uv>=0.5"

install: $(UV)
	$(UV) sync --frozen

run: install
	$(UV) run agent-chat up

lint: install
	$(UV) run ruff check .
	$(UV) run ruff format --check .

typecheck: install
	$(UV) run mypy

check: lint typecheck

test: check
	$(UV) run pytest

fmt: install
	$(UV) run ruff format .
	$(UV) run ruff check --fix .

bench: install
	$(UV) run python bench/backend_lists.py
