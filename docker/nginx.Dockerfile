# The gateway: the built browser client plus nginx/default.conf.template, which the nginx
# image fills from the environment (LISTEN, BACKEND_UPSTREAM, AGENT_UPSTREAM, RESOLVER,
# STATIC_ROOT) into /etc/nginx/conf.d/default.conf at start; nginx-upstreams.envsh first
# turns the two upstream lists into `server` lines.
FROM node:20-alpine AS client
WORKDIR /frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

# 1.28 (stable): `server ... resolve` in an upstream with a zone is open source since 1.27.3,
# so `docker compose up --scale agent=3` gives nginx three agent servers without a reload.
FROM nginx:1.28-alpine
ENV LISTEN=8080 \
    BACKEND_UPSTREAM=backend:8000 \
    AGENT_UPSTREAM=agent:7860 \
    RESOLVER=127.0.0.11 \
    STATIC_ROOT=/usr/share/nginx/html
COPY --chmod=755 docker/nginx-upstreams.envsh /docker-entrypoint.d/18-agent-chat-upstreams.envsh
COPY nginx/default.conf.template /etc/nginx/templates/default.conf.template
COPY --from=client /frontend/dist /usr/share/nginx/html
EXPOSE 8080
