"""``action.yml`` is a well-formed composite action: every input it uses exists and every input
is used, every step that runs a command names its shell, actions are pinned to a commit, and
every setting ``aieval github`` reads from the environment is one the action sets."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

import aieval.cli

ACTION = Path(__file__).resolve().parents[2] / "action.yml"


def _action() -> dict[str, Any]:
    data = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_it_is_a_composite_action_whose_steps_have_a_shell() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert steps
    for step in steps:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step.get("shell") == "bash", step


def test_used_actions_are_pinned_to_a_commit() -> None:
    for step in _action()["runs"]["steps"]:
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]


def test_every_input_used_exists_and_every_input_is_used() -> None:
    action = _action()
    text = ACTION.read_text(encoding="utf-8")
    used = set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", text))
    declared = set(action["inputs"])
    assert used == declared, {"undeclared": used - declared, "unused": declared - used}
    for name, spec in action["inputs"].items():
        assert spec.get("description"), name
        assert spec.get("required") or "default" in spec, name


def test_inputs_reach_commands_only_through_the_environment() -> None:
    """``${{ inputs.x }}`` inside a script would let an input's text run as shell code."""
    for step in _action()["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["run"]


def test_every_output_comes_from_the_command_step() -> None:
    action = _action()
    step_ids = {s.get("id") for s in action["runs"]["steps"]}
    for name, spec in action["outputs"].items():
        match = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.([\w-]+) \}\}", spec["value"])
        assert match and match.group(1) in step_ids and match.group(2) == name, name


def test_the_environment_the_action_sets_is_what_the_command_reads() -> None:
    commands: dict[str, Any] = getattr(typer.main.get_command(aieval.cli.app), "commands", {})
    read = {p.envvar for p in commands["github"].params if isinstance(p.envvar, str)}
    assert len(read) == 11  # every option but --db, --baseline-db and --output; the files
    (step,) = [s for s in _action()["runs"]["steps"] if s.get("id") == "aieval"]
    env = set(step["env"])
    assert read <= env, read - env
    assert {"GITHUB_TOKEN", "AIEVAL_GITHUB_STORE"} <= env
    assert '--db "$AIEVAL_GITHUB_STORE"' in step["run"]
    assert '--baseline-db "$AIEVAL_GITHUB_BASELINE_DB"' in step["run"]
    assert {"AIEVAL_GITHUB_BASELINE_DB"} <= env


@pytest.mark.parametrize(
    ("requirement", "extras", "installed"),
    [
        pytest.param("", "", "{action}", id="the-action-itself"),
        pytest.param("", "postgres,anthropic", "{action}[postgres,anthropic]", id="extras"),
        pytest.param("aieval[postgres]==0.2.0", "x", "aieval[postgres]==0.2.0", id="requirement"),
    ],
)
def test_the_install_step_installs_what_the_inputs_say(
    tmp_path: Path, requirement: str, extras: str, installed: str
) -> None:
    (step,) = [s for s in _action()["runs"]["steps"] if s.get("name") == "Install aieval"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python"  # records the arguments pip would get
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS_FILE"\n')
    fake.chmod(0o755)
    action_path = str(tmp_path / "action dir")
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "ARGS_FILE": str(tmp_path / "args"),
        "AIEVAL_REQUIREMENT": requirement,
        "AIEVAL_EXTRAS": extras,
        "AIEVAL_ACTION_PATH": action_path,
    }
    assert set(step["env"]) == {"AIEVAL_REQUIREMENT", "AIEVAL_EXTRAS", "AIEVAL_ACTION_PATH"}
    subprocess.run(["bash", "-c", step["run"]], env=env, check=True, timeout=60)
    args = (tmp_path / "args").read_text().splitlines()
    assert args[:3] == ["-m", "pip", "install"]
    assert args[-1] == installed.format(action=action_path)
