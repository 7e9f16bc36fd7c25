# The Python services: `agent-chat backend` and `agent-chat agent` run from this one image
# with different commands (docker-compose.yml).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PROJECT_ENVIRONMENT=/opt/venv \
    PATH="/opt/venv/bin:$PATH"

RUN pip install --no-cache-dir "uv>=0.5" \
    && useradd --system --uid 10001 --create-home app

WORKDIR /app
# Dependencies first, so code changes do not reinstall them.
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project

COPY alembic.ini conf.yml ./
COPY migrations ./migrations
COPY backend ./backend
COPY agent ./agent
COPY agent_chat ./agent_chat
COPY common ./common
# The project's own code is compiled too (PYTHONDONTWRITEBYTECODE: nothing is written at run time).
RUN uv sync --frozen --no-dev && python -m compileall -q backend agent agent_chat common \
    && mkdir -p /app/.data && chown app /app/.data

USER app
EXPOSE 8000 7860
CMD ["agent-chat", "backend", "--host", "0.0.0.0", "--port", "8000"]
