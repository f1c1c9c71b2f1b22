"""Every YAML file aieval reads refuses an alias bomb quickly, with an error naming the file."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from aieval._yaml import load_yaml_text
from aieval.errors import ConfigError, RubricError, UserError, WorkflowError
from aieval.grading import load_profile, load_rubric
from aieval.report import PromotionPolicy
from aieval.runner import load_eval
from aieval.workflows import load_workflow


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """The classic nested-alias pyramid: ``width ** levels`` strings from a few hundred bytes."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    for level in range(1, levels):
        refs = ", ".join([f"*l{level - 1}"] * width)
        lines.append(f"l{level}: &l{level} [{refs}]")
    return "\n".join(lines) + "\n"


LOADERS = [
    pytest.param(load_eval, ConfigError, id="eval-file"),
    pytest.param(load_workflow, WorkflowError, id="workflow"),
    pytest.param(load_rubric, RubricError, id="rubric"),
    pytest.param(load_profile, RubricError, id="profile"),
    pytest.param(PromotionPolicy.from_file, ConfigError, id="promotion-policy"),
]


@pytest.mark.parametrize(("load", "error"), LOADERS)
def test_alias_bomb_is_refused_before_it_expands(
    tmp_path: Path, load: object, error: type[UserError]
) -> None:
    file = tmp_path / "bomb.yaml"
    file.write_text("name: x\n" + alias_bomb())
    assert file.stat().st_size < 600
    start = time.perf_counter()
    with pytest.raises(error, match="alias") as caught:
        load(file)  # type: ignore[operator]
    # expanding 9**9 strings would take minutes (or all memory); refusing takes milliseconds,
    # and the bound leaves a loaded machine room for those
    assert time.perf_counter() - start < 10.0
    assert str(file) in str(caught.value)


def test_a_few_shared_anchors_still_load() -> None:
    text = "base: &base {model: m, temperature: 0}\na: *base\nb: *base\nlist: [*base, *base]\n"
    data = load_yaml_text(text, "shared.yaml")
    assert data["a"] == data["b"] == {"model": "m", "temperature": 0}
    assert len(data["list"]) == 2


def test_recursive_alias_is_refused() -> None:
    with pytest.raises(RubricError, match="recursive"):
        load_yaml_text("a: &a [1, *a]\n", "loop.yaml")


def test_cli_refuses_the_bomb_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text("name: x\n" + alias_bomb())
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "run", "bomb.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "bomb.yaml" in done.stderr and "alias" in done.stderr
    assert "Traceback" not in done.stderr
