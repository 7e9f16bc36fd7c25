"""Workflow files are validated at start-up: a bad one is a clear error naming the file and the
field, and the backend does not start; the shipped ones load, each with RU and EN keywords."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agent.workflows import templates as agent_templates
from agent.workflows.definitions import Definition
from backend.workflows import templates as backend_templates
from backend.workflows.loader import DefinitionError, load
from tests.support.processes import ROOT, free_port

SHIPPED = ROOT / "workflows"
GOOD = {
    "name": "probe",
    "description": "A probe.",
    "trigger_keywords": ["probe it"],
    "steps": [
        {
            "name": "one",
            "type": "tool_call",
            "tool": "get_dashboard",
            "params": {"dashboard_id": 42},
        },
        {"name": "two", "type": "llm_call", "prompt": "Say {{ steps.one.title }}"},
    ],
    "final_answer": "{{ steps.two.text }}",
}


def write(folder: Path, name: str, data: object) -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True))
    return path


def with_(**changes: object) -> dict[str, object]:
    data = {**GOOD, **changes}
    return data


def with_step(index: int, **changes: object) -> dict[str, object]:
    steps = [dict(s) for s in GOOD["steps"]]  # type: ignore[union-attr]
    steps[index].update(changes)
    return with_(steps=steps)


BAD = [
    (with_step(0, tool="drop_database"), "steps.0.tool"),
    (with_step(0, params={"dashboard": 42}), "steps.0: get_dashboard has no argument(s) dashboard"),
    (with_step(1, prompt="{{ steps.one.title "), "steps.1.prompt: template syntax error"),
    (with_step(1, prompt="{{ steps.three.text }}"), "steps.three is not a step that runs before"),
    (with_step(1, prompt="{{ secrets.key }}"), "unknown name(s) secrets"),
    (with_step(1, prompt="{{ steps.one | shell }}"), "there is no filter named 'shell'"),
    (with_step(1, name="one"), "'one' is used by an earlier step"),
    (with_step(1, type="sql_call"), "steps.1"),
    (with_(final_answer="{{ steps.nope.text }}"), "final_answer: steps.nope is not a step"),
    (with_(trigger_keywords=[]), "trigger_keywords"),
    (with_(surprise=True), "surprise: Extra inputs are not permitted"),
    ("- just\n- a list\n", "the file must hold one mapping"),
    ("name: [unclosed\n", "not a readable YAML file"),
]


@pytest.mark.parametrize(("data", "says"), BAD, ids=[b[1][:40] for b in BAD])
def test_a_bad_workflow_file_is_an_error_naming_the_file_and_the_field(tmp_path, data, says):
    path = write(tmp_path, "broken.yaml", data)
    with pytest.raises(DefinitionError) as caught:
        load(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and says in message, message


def test_two_files_with_one_name_are_refused_naming_both(tmp_path):
    write(tmp_path, "a.yaml", GOOD)
    second = write(tmp_path, "b.yaml", GOOD)
    with pytest.raises(
        DefinitionError, match=re.escape(f"{second}: name: 'probe' is already defined in")
    ):
        load(tmp_path)


def test_the_backend_does_not_start_with_a_bad_workflow_file_and_says_why(backend_env, tmp_path):
    write(tmp_path, "good.yaml", GOOD)
    bad = write(tmp_path, "deploy_everything.yaml", with_step(0, tool="rm_rf"))
    env = {**os.environ, **backend_env, "WORKFLOW__DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "agent_chat.cli", "backend", "--port", str(free_port())],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert f"agent-chat: {bad}: steps.0.tool: Input should be" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_shipped_workflows_load_and_each_has_russian_and_english_keywords():
    found = load(SHIPPED)
    assert len(found) >= 3
    assert {"explore_table", "dashboard_predeploy_check", "todays_errors"} <= {
        d.name for d in found
    }
    for definition in found:
        words = " ".join(definition.trigger_keywords)
        assert re.search("[\u0430-\u044f\u0451]", words) and re.search("[a-z]", words), (
            definition.name
        )


def test_the_definitions_route_serves_them_and_the_agent_reads_that_answer(api, as_user):
    response = api.get("/api/workflow/definitions", headers=as_user["viewer"])
    assert response.status_code == 200
    items = response.json()["items"]
    assert [i["name"] for i in items] == [d.name for d in load(SHIPPED)]
    assert set(items[0]) >= {"name", "description", "trigger_keywords", "steps", "final_answer"}
    parsed = [Definition.model_validate(i) for i in items]
    assert [len(d.steps) for d in parsed] == [len(i["steps"]) for i in items]
    assert api.get("/api/workflow/definitions").status_code == 401


def test_the_agent_renders_with_exactly_the_filters_the_backend_allows():
    assert agent_templates.FILTERS == backend_templates.EXTRA_FILTERS
    env = agent_templates.environment()
    assert set(env.filters) >= backend_templates.EXTRA_FILTERS
