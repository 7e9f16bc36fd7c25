"""Helpers of the schedules' tests: create, poll runs, read the conversation."""

from __future__ import annotations

import time
from typing import Any

import httpx


def create(sapi: httpx.Client, headers: dict[str, str], **body: Any) -> dict[str, Any]:
    response = sapi.post("/api/schedules", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return dict(response.json())


def runs(sapi: httpx.Client, headers: dict[str, str], schedule_id: str) -> list[dict[str, Any]]:
    response = sapi.get(f"/api/schedules/{schedule_id}/runs", headers=headers)
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def wait_runs(
    sapi: httpx.Client,
    headers: dict[str, str],
    schedule_id: str,
    done: Any,
    timeout: float = 60,
) -> list[dict[str, Any]]:
    """Poll the runs until `done(items)`; the items then."""
    deadline = time.monotonic() + timeout
    items: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        items = runs(sapi, headers, schedule_id)
        if done(items):
            return items
        time.sleep(0.3)
    raise AssertionError(f"runs never reached the expected state: {items}")


def finished(count: int = 1) -> Any:
    return lambda items: len([r for r in items if r["status"] != "running"]) >= count


def history(sapi: httpx.Client, headers: dict[str, str], cid: str) -> list[dict[str, Any]]:
    response = sapi.get(f"/api/assistant/conversations/{cid}/history", headers=headers)
    assert response.status_code == 200, response.text
    return list(response.json()["items"])
