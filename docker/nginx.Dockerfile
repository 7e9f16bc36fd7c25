# The gateway: the built browser client plus nginx/default.conf.template, which the nginx
# image fills from the environment (LISTEN, BACKEND_UPSTREAM, AGENT_UPSTREAM, STATIC_ROOT)
# into /etc/nginx/conf.d/default.conf at start.
FROM node:20-alpine AS client
WORKDIR /frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM nginx:1.27-alpine
ENV LISTEN=8080 \
    BACKEND_UPSTREAM=backend:8000 \
    AGENT_UPSTREAM=agent:7860 \
    STATIC_ROOT=/usr/share/nginx/html
COPY nginx/default.conf.template /etc/nginx/templates/default.conf.template
COPY --from=client /frontend/dist /usr/share/nginx/html
EXPOSE 8080
