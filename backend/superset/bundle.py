"""A Superset dashboard's export bundle as an immutable definition version, the edits a commit
makes to it, and the safe promotion that turns it into an import for another environment.

A definition of a Superset dashboard:
`{"superset": {"uuid", "title", "files": {path: yaml}}, "charts": [{key, uuid, title, type,
viz_type, datasource}]}`. The files are the export's YAML (its root folder removed) with each
database reduced to its name and UUID: no connection string is ever stored.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from datetime import UTC, datetime
from typing import Any

import yaml

from backend.errors import Unprocessable

DASHBOARD_KEY = "dashboard"  # an update with this key retitles the dashboard itself
MAX_BUNDLE_BYTES = 5_000_000
CHART_TYPES = {
    "table": "table",
    "big_number_total": "number",
    "big_number": "number",
    "pie": "pie",
    "echarts_timeseries_line": "line",
    "line": "line",
    "echarts_timeseries_bar": "bar",
    "bar": "bar",
    "dist_bar": "bar",
    "echarts_area": "area",
    "area": "area",
}


def is_superset(definition: dict[str, Any]) -> bool:
    return isinstance(definition.get("superset"), dict)


def _load(text: str) -> dict[str, Any]:
    loaded = yaml.safe_load(text)
    return loaded if isinstance(loaded, dict) else {}


def _dump(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


load, dump = _load, _dump


def read_export(data: bytes) -> dict[str, str]:
    """The export ZIP's YAML files by path (root folder removed, metadata and connection
    strings dropped)."""
    if len(data) > MAX_BUNDLE_BYTES:
        raise Unprocessable("The Superset export bundle is too large")
    files: dict[str, str] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for name in archive.namelist():
            path = name.split("/", 1)[1] if "/" in name else name
            if not path.endswith(".yaml") or path == "metadata.yaml":
                continue
            text = archive.read(name).decode()
            if path.startswith("databases/"):
                config = _load(text)
                text = _dump({"database_name": config["database_name"], "uuid": config["uuid"]})
            files[path] = text
    return dict(sorted(files.items()))


def fingerprint(files: dict[str, str]) -> str:
    """What says a staging dashboard changed: its files' content (paths carry instance ids)."""
    digest = hashlib.sha256()
    for text in sorted(files.values()):
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _kind(files: dict[str, str], prefix: str) -> list[tuple[str, dict[str, Any]]]:
    return [(path, _load(text)) for path, text in files.items() if path.startswith(prefix)]


def definition(files: dict[str, str], chart_order: list[str]) -> dict[str, Any]:
    """The version's definition: the bundle plus a chart list in the dashboard's order."""
    dashboards = _kind(files, "dashboards/")
    if len(dashboards) != 1:
        raise Unprocessable("A Superset export bundle holds exactly one dashboard")
    dashboard = dashboards[0][1]
    datasets = {cfg["uuid"]: cfg for _, cfg in _kind(files, "datasets/")}
    charts = []
    for _, cfg in _kind(files, "charts/"):
        dataset = datasets.get(cfg.get("dataset_uuid"), {})
        viz = str(cfg.get("viz_type") or "table")
        charts.append(
            {
                "key": str(cfg["uuid"]),
                "uuid": str(cfg["uuid"]),
                "title": str(cfg.get("slice_name") or cfg["uuid"]),
                "type": CHART_TYPES.get(viz, "table"),
                "viz_type": viz,
                "datasource": str(dataset.get("table_name", "")),
                "dataset_uuid": str(cfg.get("dataset_uuid") or ""),
            }
        )
    rank = {uuid: i for i, uuid in enumerate(chart_order)}
    charts.sort(key=lambda c: (rank.get(c["uuid"], len(rank)), c["title"]))
    return {
        "superset": {
            "uuid": str(dashboard["uuid"]),
            "title": str(dashboard.get("dashboard_title") or ""),
            "files": files,
        },
        "charts": charts,
    }


def chart_order(files: dict[str, str]) -> list[str]:
    """Chart UUIDs in the order the dashboard's layout places them."""
    dashboard = next(cfg for _, cfg in _kind(files, "dashboards/"))
    position = dashboard.get("position") or {}
    return [
        str(node["meta"]["uuid"])
        for node in position.values()
        if isinstance(node, dict)
        and node.get("type") == "CHART"
        and node.get("meta", {}).get("uuid")
    ]


def retitle_dashboard(files: dict[str, str], title: str) -> None:
    path, cfg = next(iter(_kind(files, "dashboards/")))
    cfg["dashboard_title"] = title
    files[path] = _dump(cfg)


def place_chart(files: dict[str, str], uuid: str, title: str) -> None:
    """Append the chart to the dashboard's layout, in a row of its own under the grid."""
    path, cfg = next(iter(_kind(files, "dashboards/")))
    position = cfg.get("position") or {}
    grid = position.setdefault(
        "GRID_ID", {"type": "GRID", "id": "GRID_ID", "children": [], "parents": ["ROOT_ID"]}
    )
    row_id, chart_id = f"ROW-{uuid[:12]}", f"CHART-{uuid[:12]}"
    grid.setdefault("children", []).append(row_id)
    position[row_id] = {
        "type": "ROW",
        "id": row_id,
        "children": [chart_id],
        "parents": ["ROOT_ID", "GRID_ID"],
        "meta": {"background": "BACKGROUND_TRANSPARENT"},
    }
    position[chart_id] = {
        "type": "CHART",
        "id": chart_id,
        "children": [],
        "parents": ["ROOT_ID", "GRID_ID", row_id],
        "meta": {"uuid": uuid, "chartId": 0, "sliceName": title, "width": 4, "height": 50},
    }
    cfg["position"] = position
    files[path] = _dump(cfg)


def unplace_chart(files: dict[str, str], uuid: str) -> None:
    """The chart leaves the layout and the bundle (it stays in Superset)."""
    path, cfg = next(iter(_kind(files, "dashboards/")))
    position = cfg.get("position") or {}
    gone = [
        node_id
        for node_id, node in position.items()
        if isinstance(node, dict) and node.get("meta", {}).get("uuid") == uuid
    ]
    for node_id in gone:
        del position[node_id]
    for node in position.values():
        if isinstance(node, dict) and node.get("children"):
            node["children"] = [c for c in node["children"] if c not in gone]
    files[path] = _dump(cfg)
    for chart_path, chart in _kind(files, "charts/"):
        if str(chart.get("uuid")) == uuid:
            del files[chart_path]


def promotion(files: dict[str, str], target_databases: dict[str, str]) -> bytes:
    """The import ZIP for another environment: no `databases/` (the target's connections are
    never touched), each dataset bound to the target's database of the same name, catalog
    null (an export names the source's database there). `target_databases`: name -> UUID."""
    names = {cfg["uuid"]: cfg["database_name"] for _, cfg in _kind(files, "databases/")}
    out: dict[str, str] = {}
    for path, text in files.items():
        if path.startswith("databases/"):
            continue
        if path.startswith("datasets/"):
            cfg = _load(text)
            name = names.get(cfg.get("database_uuid"), "")
            if name not in target_databases:
                raise MissingDatabase(name)
            cfg["database_uuid"] = target_databases[name]
            cfg["catalog"] = None
            text = _dump(cfg)
        out[path] = text
    metadata = {"version": "1.0.0", "type": "assets", "timestamp": datetime.now(UTC).isoformat()}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bundle/metadata.yaml", _dump(metadata))
        for path, text in out.items():
            archive.writestr(f"bundle/{path}", text)
    return buffer.getvalue()


class MissingDatabase(Exception):
    """The target Superset has no database of the name a dataset's database has."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name
