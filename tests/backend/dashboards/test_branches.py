"""Branches and commits: immutable versions, schema-checked chart edits, RBAC, audit."""

from __future__ import annotations

import uuid

import pytest

from tests.backend.dashboards.conftest import GOOD_SQL, chart
from tests.backend.support import assert_error, audit_rows, scalar


def unique(prefix: str = "branch") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_branch(api, headers, dashboard_id, name=None):
    response = api.post(
        f"/api/dashboards/{dashboard_id}/branches", json={"name": name or unique()}, headers=headers
    )
    assert response.status_code == 201, response.text
    return response.json()


def commit(api, headers, branch_id, changes, message="change charts"):
    return api.post(
        f"/api/branches/{branch_id}/commits",
        json={"message": message, "changes": changes},
        headers=headers,
    )


def test_an_editor_branches_from_mains_current_version(api, as_user, sql):
    main = api.get("/api/dashboards/42", headers=as_user["viewer"]).json()
    name = unique("fix/revenue")
    branch = create_branch(api, as_user["editor"], 42, name)
    assert branch["name"] == name and branch["dashboard_id"] == 42
    assert branch["head_version_id"] == branch["base_version_id"] == main["main_version_id"]
    assert branch["definition"] == main["main"]["definition"] and branch["commits"] == []
    assert branch["created_by"] == "editor"
    listed = api.get("/api/dashboards/42", headers=as_user["viewer"]).json()["branches"]
    assert name in [b["name"] for b in listed]
    rows = audit_rows(sql, action="dashboard.branch_create", resource_id="42")
    assert any(r["details"]["branch_id"] == branch["id"] for r in rows)


def test_a_viewer_cannot_branch_and_nothing_is_written(api, as_user, sql):
    before = scalar(sql, "SELECT count(*) FROM dashboard_branches")
    response = api.post(
        "/api/dashboards/42/branches", json={"name": unique()}, headers=as_user["viewer"]
    )
    assert_error(response, 403, "FORBIDDEN")
    assert scalar(sql, "SELECT count(*) FROM dashboard_branches") == before


def test_a_branch_name_is_unique_per_dashboard(api, as_user):
    name = unique()
    create_branch(api, as_user["editor"], 42, name)
    again = api.post("/api/dashboards/42/branches", json={"name": name}, headers=as_user["editor"])
    assert_error(again, 409, "BRANCH_EXISTS")
    create_branch(api, as_user["editor"], 17, name)  # the same name on another dashboard is fine


@pytest.mark.parametrize(
    "name", ["", "main", "MAIN", "1fix", "has space", "a" * 65, "a..b", "a//b", "fix/", "-x", "ё"]
)
def test_bad_branch_names_are_invalid_input(api, as_user, name):
    response = api.post(
        "/api/dashboards/42/branches", json={"name": name}, headers=as_user["editor"]
    )
    assert_error(response, 422, "INVALID_INPUT")


def test_branching_an_unknown_dashboard_is_not_found(api, as_user):
    response = api.post(
        "/api/dashboards/999999/branches", json={"name": unique()}, headers=as_user["editor"]
    )
    assert_error(response, 404, "NOT_FOUND")


def test_a_commit_creates_a_new_version_and_moves_only_the_branch(api, as_user, sql):
    main_before = api.get("/api/dashboards/42", headers=as_user["viewer"]).json()["main_version_id"]
    branch = create_branch(api, as_user["editor"], 42)
    changes = [
        {
            "op": "add",
            "chart": chart("aov", "SELECT AVG(total_amount) AS aov FROM orders", ["aov"]),
        },
        {"op": "update", "key": "top_products", "chart": {"title": "Best sellers"}},
        {"op": "remove", "key": "orders_by_status"},
    ]
    response = commit(api, as_user["editor"], branch["id"], changes, "Add AOV, rename, drop pie")
    assert response.status_code == 201, response.text
    version = response.json()["version"]
    assert version["parent_version_id"] == branch["head_version_id"]
    assert version["author"] == "editor" and version["message"] == "Add AOV, rename, drop pie"
    charts = {c["key"]: c for c in version["definition"]["charts"]}
    assert "aov" in charts and "orders_by_status" not in charts
    assert charts["top_products"]["title"] == "Best sellers"
    assert charts["top_products"]["sql"] == next(
        c["sql"] for c in branch["definition"]["charts"] if c["key"] == "top_products"
    )
    after = api.get(f"/api/branches/{branch['id']}", headers=as_user["viewer"]).json()
    assert after["head_version_id"] == version["id"]
    assert [c["id"] for c in after["commits"]] == [version["id"]]
    assert api.get("/api/dashboards/42", headers=as_user["viewer"]).json()["main_version_id"] == (
        main_before
    )
    stored = scalar(
        sql, "SELECT parent_version_id FROM dashboard_versions WHERE id = %s", version["id"]
    )
    assert stored == branch["head_version_id"]
    rows = audit_rows(sql, action="dashboard.commit", resource_id="42")
    assert any(r["details"]["version_id"] == version["id"] for r in rows)


def test_successive_commits_chain_their_versions(api, as_user):
    branch = create_branch(api, as_user["editor"], 42)
    first = commit(api, as_user["editor"], branch["id"], [{"op": "remove", "key": "top_products"}])
    second = commit(
        api, as_user["editor"], branch["id"], [{"op": "remove", "key": "orders_by_status"}]
    )
    assert second.json()["version"]["parent_version_id"] == first.json()["version"]["id"]
    after = api.get(f"/api/branches/{branch['id']}", headers=as_user["viewer"]).json()
    assert [c["id"] for c in after["commits"]] == [
        second.json()["version"]["id"],
        first.json()["version"]["id"],
    ]


ADD_OK = chart("extra_chart")
BAD_COMMITS = {
    "unknown top-level key": {
        "message": "m",
        "changes": [{"op": "add", "chart": ADD_OK}],
        "force": True,
    },
    "empty change list": {"message": "m", "changes": []},
    "empty message": {"message": "  ", "changes": [{"op": "add", "chart": ADD_OK}]},
    "unknown operation": {"message": "m", "changes": [{"op": "rename", "key": "top_products"}]},
    "unknown chart field": {
        "message": "m",
        "changes": [{"op": "add", "chart": {**ADD_OK, "x": 1}}],
    },
    "chart without sql": {
        "message": "m",
        "changes": [{"op": "add", "chart": {k: v for k, v in ADD_OK.items() if k != "sql"}}],
    },
    "empty sql": {"message": "m", "changes": [{"op": "add", "chart": {**ADD_OK, "sql": "   "}}]},
    "unknown chart type": {
        "message": "m",
        "changes": [{"op": "add", "chart": {**ADD_OK, "type": "sankey"}}],
    },
    "bad chart key": {
        "message": "m",
        "changes": [{"op": "add", "chart": {**ADD_OK, "key": "A B"}}],
    },
    "duplicate expected columns": {
        "message": "m",
        "changes": [{"op": "add", "chart": {**ADD_OK, "expected_columns": ["a", "a"]}}],
    },
    "add an existing key": {
        "message": "m",
        "changes": [{"op": "add", "chart": chart("top_products")}],
    },
    "add the same key twice": {
        "message": "m",
        "changes": [{"op": "add", "chart": ADD_OK}, {"op": "add", "chart": ADD_OK}],
    },
    "unknown datasource": {
        "message": "m",
        "changes": [{"op": "add", "chart": {**ADD_OK, "datasource": "no_such_source"}}],
    },
    "update a missing key": {
        "message": "m",
        "changes": [{"op": "update", "key": "nope", "chart": {"title": "x"}}],
    },
    "update changing nothing": {
        "message": "m",
        "changes": [{"op": "update", "key": "top_products", "chart": {}}],
    },
    "update trying to rename the key": {
        "message": "m",
        "changes": [{"op": "update", "key": "top_products", "chart": {"key": "best"}}],
    },
    "update blanking the sql": {
        "message": "m",
        "changes": [{"op": "update", "key": "top_products", "chart": {"sql": None}}],
    },
    "update to an unknown datasource": {
        "message": "m",
        "changes": [{"op": "update", "key": "top_products", "chart": {"datasource": "nope"}}],
    },
    "remove a missing key": {"message": "m", "changes": [{"op": "remove", "key": "nope"}]},
    "too many charts": {
        "message": "m",
        "changes": [{"op": "add", "chart": chart(f"c{i}", GOOD_SQL)} for i in range(30)],
    },
    "an edit that changes nothing": {
        "message": "m",
        "changes": [{"op": "update", "key": "top_products", "chart": {"type": "bar"}}],
    },
}


@pytest.mark.parametrize("payload", BAD_COMMITS.values(), ids=BAD_COMMITS.keys())
def test_commits_that_break_the_definition_schema_are_refused_and_write_nothing(
    api, as_user, sql, payload
):
    branch = create_branch(api, as_user["editor"], 42)
    counts = (
        "SELECT (SELECT count(*) FROM dashboard_versions), (SELECT count(*) FROM assistant_audit)"
    )
    before = sql.execute(counts).fetchone()
    response = api.post(
        f"/api/branches/{branch['id']}/commits", json=payload, headers=as_user["editor"]
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] in {"INVALID_INPUT", "INVALID_DEFINITION", "NO_CHANGES"}
    assert error["message"]
    assert sql.execute(counts).fetchone() == before
    head = scalar(sql, "SELECT head_version_id FROM dashboard_branches WHERE id = %s", branch["id"])
    assert head == branch["head_version_id"]


def test_schema_errors_say_which_change_or_field_is_wrong(api, as_user):
    branch = create_branch(api, as_user["editor"], 42)
    missing = commit(
        api,
        as_user["editor"],
        branch["id"],
        [{"op": "add", "chart": ADD_OK}, {"op": "remove", "key": "nope"}],
    )
    error = assert_error(missing, 422, "INVALID_DEFINITION")
    assert error["details"]["errors"] == [{"change": 1, "msg": "no chart with key: nope"}]
    unknown = commit(
        api,
        as_user["editor"],
        branch["id"],
        [{"op": "add", "chart": {**ADD_OK, "datasource": "dw"}}],
    )
    error = assert_error(unknown, 422, "INVALID_DEFINITION")
    assert "unknown datasource: dw" in error["details"]["errors"][0]["msg"]


def test_a_viewer_cannot_commit(api, as_user):
    branch = create_branch(api, as_user["editor"], 42)
    response = commit(
        api, as_user["viewer"], branch["id"], [{"op": "remove", "key": "top_products"}]
    )
    assert_error(response, 403, "FORBIDDEN")


def test_unknown_branches_are_not_found(api, as_user):
    assert_error(api.get("/api/branches/999999", headers=as_user["viewer"]), 404, "NOT_FOUND")
    response = commit(api, as_user["editor"], 999999, [{"op": "remove", "key": "x"}])
    assert_error(response, 404, "NOT_FOUND")


def test_merge_fast_forwards_main_and_refuses_a_diverged_branch(api, as_user, make_dashboard):
    dashboard_id = make_dashboard([chart("a"), chart("b")])
    first = create_branch(api, as_user["editor"], dashboard_id)
    second = create_branch(api, as_user["editor"], dashboard_id)
    made = commit(api, as_user["editor"], first["id"], [{"op": "remove", "key": "b"}]).json()
    merged = api.post(f"/api/branches/{first['id']}/merge", headers=as_user["editor"])
    assert merged.status_code == 200, merged.text
    assert merged.json()["main_version_id"] == made["version"]["id"]
    dashboard = api.get(f"/api/dashboards/{dashboard_id}", headers=as_user["viewer"]).json()
    assert dashboard["main_version_id"] == made["version"]["id"]
    again = api.post(f"/api/branches/{first['id']}/merge", headers=as_user["editor"])
    assert_error(again, 409, "NOTHING_TO_MERGE")
    commit(api, as_user["editor"], second["id"], [{"op": "remove", "key": "a"}])
    diverged = api.post(f"/api/branches/{second['id']}/merge", headers=as_user["editor"])
    assert_error(diverged, 409, "NOT_FAST_FORWARD")
    viewer = api.post(f"/api/branches/{second['id']}/merge", headers=as_user["viewer"])
    assert_error(viewer, 403, "FORBIDDEN")
