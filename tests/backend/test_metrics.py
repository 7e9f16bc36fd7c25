"""The backend's `/metrics` (Prometheus text) over real HTTP: requests counted by the route
template, never the raw path, and the request id every answer carries."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import bearer


def _requests(api: httpx.Client) -> dict[tuple[str, str, str], float]:
    response = api.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (s.labels["method"], s.labels["route"], s.labels["status"]): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
        if s.name == "http_requests_total"
    }


def test_requests_are_counted_by_route_template_and_status(
    api: httpx.Client, tokens: dict[str, str]
) -> None:
    before = _requests(api)
    for _ in range(2):
        assert api.get("/api/dashboards/42", headers=bearer(tokens["admin"])).is_success
    missing = api.get("/api/dashboards/987654", headers=bearer(tokens["admin"]))
    assert missing.status_code == 404
    assert api.get("/api/dashboards/42").status_code == 401
    assert api.get("/no/such/path/123").status_code == 404

    after = _requests(api)

    def delta(key: tuple[str, str, str]) -> float:
        return after.get(key, 0) - before.get(key, 0)

    assert delta(("GET", "/api/dashboards/{dashboard_id}", "200")) == 2
    assert delta(("GET", "/api/dashboards/{dashboard_id}", "401")) == 1
    assert delta(("GET", "/api/dashboards/{dashboard_id}", "404")) == 1
    assert delta(("GET", "unmatched", "404")) == 1
    routes = {route for _m, route, _s in after}
    assert not any(route.endswith(("/42", "/987654", "/123")) for route in routes)
    assert "/metrics" not in routes  # the scraper does not count itself


def test_every_answer_carries_a_request_id(api: httpx.Client) -> None:
    given = api.get("/healthz", headers={"X-Request-ID": "op-check-1"})
    assert given.headers["X-Request-ID"] == "op-check-1"
    fresh = api.get("/healthz").headers["X-Request-ID"]
    assert len(fresh) == 32 and fresh != api.get("/healthz").headers["X-Request-ID"]
