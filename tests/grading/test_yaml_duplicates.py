"""Every YAML file aieval reads refuses a repeated key, naming file, key path and both lines."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import Done, run_main

from aieval._yaml import load_yaml_text
from aieval.code._evalfile import load_code_eval
from aieval.errors import ConfigError, RubricError, UserError, WorkflowError
from aieval.grading import load_profile, load_rubric
from aieval.report import PromotionPolicy
from aieval.runner import load_eval
from aieval.workflows import load_workflow

LOADERS = [
    pytest.param(load_eval, ConfigError, id="eval-file"),
    pytest.param(load_code_eval, ConfigError, id="code-eval-file"),
    pytest.param(load_workflow, WorkflowError, id="workflow"),
    pytest.param(load_rubric, RubricError, id="rubric"),
    pytest.param(load_profile, RubricError, id="profile"),
    pytest.param(PromotionPolicy.from_file, ConfigError, id="promotion-policy"),
]

NESTED = """\
name: x
outer:
  keep: 1
  inner: 2
  inner: 3
"""


@pytest.mark.parametrize(("load", "error"), LOADERS)
def test_every_file_kind_refuses_a_top_level_duplicate(
    tmp_path: Path, load: Callable[[Path], Any], error: type[UserError]
) -> None:
    file = tmp_path / "dup.yaml"
    file.write_text("task: code\nalpha: 0.05\nname: x\nalpha: 0.5\n")
    with pytest.raises(error) as caught:
        load(file)
    message = str(caught.value)
    assert str(file) in message
    assert "duplicate key 'alpha'" in message
    assert "lines 2 and 4" in message


@pytest.mark.parametrize(("load", "error"), LOADERS)
def test_every_file_kind_refuses_a_nested_duplicate_with_its_path(
    tmp_path: Path, load: Callable[[Path], Any], error: type[UserError]
) -> None:
    file = tmp_path / "nested.yaml"
    file.write_text(NESTED)
    with pytest.raises(error) as caught:
        load(file)
    message = str(caught.value)
    assert str(file) in message
    assert "duplicate key 'outer.inner'" in message
    assert "lines 4 and 5" in message


def test_a_duplicate_inside_a_list_item_names_the_index() -> None:
    text = "scorers:\n  - name: a\n  - name: b\n    weight: 1\n    name: c\n"
    with pytest.raises(RubricError, match=r"duplicate key 'scorers\[1\]\.name'.*lines 3 and 5"):
        load_yaml_text(text, "list.yaml")


def test_keys_that_load_as_the_same_value_are_duplicates() -> None:
    # ``yes`` and ``true`` are both True in YAML 1.1: the second would replace the first
    with pytest.raises(
        RubricError, match=r"duplicate key 'true' \(the same key as 'yes'\) on lines 1 and 2"
    ):
        load_yaml_text("yes: 1\ntrue: 2\n", "bools.yaml")


def test_merge_keys_may_still_be_overridden() -> None:
    text = "base: &base {model: m, temperature: 0}\nrun:\n  <<: *base\n  temperature: 1\n"
    data = load_yaml_text(text, "merge.yaml")
    assert data["run"] == {"model": "m", "temperature": 1}


def test_a_file_without_duplicates_loads_as_before() -> None:
    data = load_yaml_text("settings: {pass_threshold: 0.9, concurrency: 2}\n", "ok.yaml")
    assert data == {"settings": {"pass_threshold": 0.9, "concurrency": 2}}


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aieval", *args],
        cwd=cwd, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


Cli = Callable[..., Done]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """``aieval ARGS`` in this process (what a command prints, without a process's start)."""

    def invoke(args: list[str], cwd: Path) -> Done:
        return run_main(capsys, monkeypatch, *args, cwd=cwd)

    return invoke


def test_cli_run_refuses_settings_given_twice(tmp_path: Path) -> None:
    # the one real process for ``aieval run`` in this file: the refusal as a user's shell sees it
    (tmp_path / "data.jsonl").write_text('{"id": "a", "input": "q", "expected": "x"}\n')
    (tmp_path / "dup.yaml").write_text(
        "name: dup\ndataset: data.jsonl\nmodel: v1\nscorers: [token_f1]\n"
        "settings: {pass_threshold: 0.9}\nsettings: {concurrency: 2}\n"
    )
    done = _cli(["run", "dup.yaml", "--db", "a.db"], tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "dup.yaml" in done.stderr
    assert "duplicate key 'settings'" in done.stderr and "lines 5 and 6" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "a.db").exists()


def test_cli_run_refuses_scorers_given_twice(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "data.jsonl").write_text('{"id": "a", "input": "q", "expected": "x"}\n')
    (tmp_path / "dup2.yaml").write_text(
        "name: dup\ndataset: data.jsonl\nmodel: v1\nscorers: [token_f1]\nscorers: [exact_match]\n"
    )
    done = cli(["run", "dup2.yaml"], tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "duplicate key 'scorers'" in done.stderr and "lines 4 and 5" in done.stderr


def test_cli_compare_refuses_a_policy_with_alpha_twice(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "dupalpha.yaml").write_text("alpha: 0.05\nalpha: 0.5\n")
    done = cli(["compare", "a", "b", "--policy", "dupalpha.yaml"], tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "dupalpha.yaml" in done.stderr
    assert "duplicate key 'alpha'" in done.stderr and "lines 1 and 2" in done.stderr


def test_cli_rubric_validate_reports_the_duplicate(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(NESTED)
    done = _cli(["rubric", "validate", "r.yaml"], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "duplicate key 'outer.inner'" in done.stdout and "lines 4 and 5" in done.stdout
