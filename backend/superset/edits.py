"""A commit's changes applied to a Superset dashboard's bundle: chart titles and queries
updated (params and query context), charts added on a staging dataset (appended to the
layout), charts removed from the layout. Returns the new files and the charts to check."""

from __future__ import annotations

import json
import re
import uuid as uuids
from dataclasses import dataclass, field
from typing import Any

from backend.dashboards.definition import AddChart, Change, EditError, UpdateChart
from backend.superset import bundle, forms
from backend.superset.client import SupersetClient
from common.tool_arguments import NewChart, query_fields

BUILTIN_FIELDS = frozenset({"type", "sql", "datasource", "expected_columns"})


@dataclass(frozen=True)
class Touched:
    """A chart the commit added or changed, as it will run."""

    key: str | None  # null for an added chart
    title: str
    spec: forms.Spec
    dataset: dict[str, Any]  # the dataset's YAML config
    query_context: dict[str, Any]


@dataclass
class Edit:
    files: dict[str, str]
    touched: dict[str, Touched] = field(default_factory=dict)  # by chart uuid
    refused: list[dict[str, Any]] = field(default_factory=list)  # {key, title, message}


def _find(files: dict[str, str], prefix: str, uuid: str) -> tuple[str, dict[str, Any]] | None:
    for path, text in files.items():
        if path.startswith(prefix):
            cfg = bundle.load(text)
            if str(cfg.get("uuid")) == uuid:
                return path, cfg
    return None


def _dataset_id(cfg: dict[str, Any], chart: dict[str, Any]) -> int:
    source = str(chart.get("params", {}).get("datasource") or "")
    head = source.split("__", 1)[0]
    return int(head) if head.isdigit() else int(cfg.get("_staging_id") or 0)


def _rebuild(edit: Edit, path: str, chart: dict[str, Any], spec: forms.Spec, key: str | None):
    dataset_path = _find(edit.files, "datasets/", str(chart["dataset_uuid"]))
    dataset = dataset_path[1] if dataset_path else {}
    dataset_id = _dataset_id(dataset, chart)
    dttm = dataset.get("main_dttm_col")
    params = forms.form_data(spec, dataset_id, dttm, chart.get("params") or {})
    context = forms.query_context(spec, dataset_id, dttm, params)
    chart.update(viz_type=spec.viz_type, params=params, query_context=json.dumps(context))
    edit.files[path] = bundle.dump(chart)
    title = str(chart.get("slice_name") or "")
    edit.touched[str(chart["uuid"])] = Touched(key, title, spec, dataset, context)


def _update(edit: Edit, i: int, change: UpdateChart) -> None:
    if change.key == bundle.DASHBOARD_KEY:
        if change.chart.model_fields_set != {"title"} or change.chart.title is None:
            raise EditError(i, "the dashboard itself may only be retitled")
        bundle.retitle_dashboard(edit.files, change.chart.title)
        return
    builtin = BUILTIN_FIELDS & change.chart.model_fields_set
    if builtin:
        raise EditError(i, f"a Superset chart has no {', '.join(sorted(builtin))}")
    found = _find(edit.files, "charts/", change.key)
    if found is None:
        raise EditError(i, f"no chart with key: {change.key}")
    path, chart = found
    if change.chart.title is not None:
        chart["slice_name"] = change.chart.title
    fields = query_fields(change.chart)
    if not fields:
        edit.files[path] = bundle.dump(chart)
        return
    spec = forms.apply(forms.from_params(str(chart.get("viz_type")), chart["params"] or {}), fields)
    _rebuild(edit, path, chart, spec, change.key)


def _slug(title: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", title).strip("_")[:40] or "chart"


async def _add(edit: Edit, i: int, new: NewChart, staging: SupersetClient) -> None:
    dataset = await _staging_dataset(edit, new.dataset, staging)
    if dataset is None:
        message = f"No dataset named {new.dataset!r} in the staging Superset"
        edit.refused.append({"key": None, "title": new.title, "message": message})
        return
    uuid = str(uuids.uuid4())
    chart: dict[str, Any] = {
        "slice_name": new.title,
        "description": None,
        "certified_by": None,
        "certification_details": None,
        "viz_type": new.viz_type,
        "params": {"datasource": f"{dataset['_staging_id']}__table"},
        "query_context": None,
        "cache_timeout": None,
        "uuid": uuid,
        "version": "1.0.0",
        "dataset_uuid": dataset["uuid"],
    }
    base = forms.Spec(new.viz_type, (), (), (), None, forms.NO_TIME_FILTER, 1000)
    spec = forms.apply(base, query_fields(new))
    path = f"charts/{_slug(new.title)}_{uuid[:8]}.yaml"
    _rebuild(edit, path, chart, spec, None)
    bundle.place_chart(edit.files, uuid, new.title)


async def _staging_dataset(
    edit: Edit, table: str, staging: SupersetClient
) -> dict[str, Any] | None:
    """The staging dataset of that table name, its YAML added to the bundle if missing."""
    rison = f"(filters:!((col:table_name,opr:eq,value:'{table}')),page_size:2)"
    if "'" in table or "!" in table:
        return None
    body = await staging.json("GET", "/api/v1/dataset/", params={"q": rison})
    found = body.get("result") or []
    if len(found) != 1:
        return None
    dataset_id = int(found[0]["id"])
    data = await staging.content("/api/v1/dataset/export/", params={"q": f"!({dataset_id})"})
    for path, text in bundle.read_export(data).items():
        if path.startswith("databases/") or path not in edit.files:
            edit.files.setdefault(path, text)
        if path.startswith("datasets/"):
            cfg = bundle.load(edit.files[path])
            return {**cfg, "_staging_id": dataset_id}
    return None


async def apply(files: dict[str, str], changes: list[Change], staging: SupersetClient) -> Edit:
    """The changes in order on a copy of `files`; EditError on the first that does not apply."""
    edit = Edit(dict(files))
    for i, change in enumerate(changes):
        if isinstance(change, UpdateChart):
            _update(edit, i, change)
        elif isinstance(change, AddChart):
            if not isinstance(change.chart, NewChart):
                raise EditError(i, "a Superset chart is added with title, viz_type and dataset")
            await _add(edit, i, change.chart, staging)
        else:
            if _find(edit.files, "charts/", change.key) is None:
                raise EditError(i, f"no chart with key: {change.key}")
            bundle.unplace_chart(edit.files, change.key)
            edit.touched.pop(change.key, None)
    return edit
