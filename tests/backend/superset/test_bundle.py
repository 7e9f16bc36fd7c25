"""The export bundle as a version, the retitling commit, and the safe promotion, on a bundle of
the shape Superset 6.1 exports (no processes: the black-box checks are in tests/superset/)."""

from __future__ import annotations

import io
import zipfile

import pytest
import yaml
from pydantic import TypeAdapter

from backend.dashboards.definition import Change
from backend.superset import bundle

DASHBOARD = "5b1e0c3e-0000-4000-8000-000000000001"
CHART = "5b1e0c3e-0000-4000-8000-000000000002"
DATASET = "5b1e0c3e-0000-4000-8000-000000000003"
STAGING_DB = "5b1e0c3e-0000-4000-8000-000000000004"
PRODUCTION_DB = "5b1e0c3e-0000-4000-8000-000000000005"
CHANGES = TypeAdapter(list[Change])


def _export() -> bytes:
    files = {
        "metadata.yaml": {"version": "1.0.0", "type": "Dashboard", "timestamp": "now"},
        "dashboards/Orders_1.yaml": {
            "dashboard_title": "Orders",
            "uuid": DASHBOARD,
            "position": {"CHART-7": {"type": "CHART", "meta": {"chartId": 7, "uuid": CHART}}},
        },
        "charts/Revenue_7.yaml": {
            "slice_name": "Revenue",
            "viz_type": "table",
            "uuid": CHART,
            "dataset_uuid": DATASET,
        },
        "datasets/Warehouse/orders_1.yaml": {
            "table_name": "orders",
            "catalog": "staging_db",
            "uuid": DATASET,
            "database_uuid": STAGING_DB,
        },
        "databases/Warehouse.yaml": {
            "database_name": "Warehouse",
            "sqlalchemy_uri": "postgresql+psycopg2://svc:XXXXXXXXXX@staging/warehouse",
            "uuid": STAGING_DB,
        },
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in files.items():
            archive.writestr(f"dashboard_export_1/{path}", yaml.safe_dump(data))
    return buffer.getvalue()


def _unzip(data: bytes) -> dict[str, dict]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: yaml.safe_load(archive.read(name)) for name in archive.namelist()}


def test_a_stored_bundle_keeps_no_connection_string_and_lists_the_charts_in_order():
    files = bundle.read_export(_export())
    assert "metadata.yaml" not in files
    assert "sqlalchemy_uri" not in files["databases/Warehouse.yaml"]
    definition = bundle.definition(files, bundle.chart_order(files))
    assert definition["superset"]["uuid"] == DASHBOARD
    assert definition["charts"] == [
        {
            "key": CHART,
            "uuid": CHART,
            "title": "Revenue",
            "type": "table",
            "viz_type": "table",
            "datasource": "orders",
            "dataset_uuid": DATASET,
        }
    ]


def test_the_promotion_binds_datasets_to_the_targets_database_and_carries_no_database():
    files = bundle.read_export(_export())
    archive = _unzip(bundle.promotion(files, {"Warehouse": PRODUCTION_DB}))
    assert not [name for name in archive if "/databases/" in name]
    dataset = archive["bundle/datasets/Warehouse/orders_1.yaml"]
    assert dataset["database_uuid"] == PRODUCTION_DB and dataset["catalog"] is None
    assert archive["bundle/metadata.yaml"]["type"] == "assets"
    assert archive["bundle/charts/Revenue_7.yaml"]["uuid"] == CHART


def test_a_target_without_a_database_of_that_name_is_refused():
    files = bundle.read_export(_export())
    with pytest.raises(bundle.MissingDatabase) as refused:
        bundle.promotion(files, {"Other": PRODUCTION_DB})
    assert refused.value.name == "Warehouse"
