"""The pytest plugin, run for real: ``python -m pytest`` on a temporary project in a subprocess."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from aieval import run
from aieval.errors import ConfigError
from aieval.scorers import exact_match
from aieval.testing import EvalFailed, EvalPolicy, assert_run, check_run

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
name: qa-good
dataset:
  rows:
    - {id: a, prompt: "2+2?", expected: "4", prediction: "4"}
    - {id: b, prompt: "Capital of France?", expected: Paris, prediction: Paris}
scorers: [exact_match]
"""

# The same eval with one wrong recorded answer, and a second scorer.
BAD = (
    GOOD.replace("qa-good", "qa-bad")
    .replace("prediction: Paris}", "prediction: Lyon}")
    .replace("[exact_match]", "[exact_match, token_f1]")
)

MARKED = textwrap.dedent(
    """
    import pytest
    from aieval import run
    from aieval.scorers import exact_match

    ROWS = [{"id": "x", "prompt": "?", "expected": "yes", "prediction": "yes"},
            {"id": "y", "prompt": "?", "expected": "yes", "prediction": "no"}]

    @pytest.mark.aieval(min_pass_rate=0.5)
    def test_lenient_policy():
        return run(name="lenient", dataset=ROWS, scorers=[exact_match], store=False)

    @pytest.mark.aieval(min_metrics={"exact_match": 0.9})
    def test_strict_policy():
        return run(name="strict", dataset=ROWS, scorers=[exact_match], store=False)
    """
)

# Marked tests that return something other than a run: each must fail, naming what it returned.
WRONG_RETURNS = textwrap.dedent(
    """
    import pytest
    from aieval import run
    from aieval.scorers import exact_match

    ROWS = [{"id": "x", "prompt": "?", "expected": "yes", "prediction": "yes"}]

    def _run():
        return run(name="ok", dataset=ROWS, scorers=[exact_match], store=False)

    @pytest.mark.aieval
    def test_returns_a_string():
        return "ok"

    @pytest.mark.aieval
    def test_returns_a_list_with_none():
        return [_run(), None]

    @pytest.mark.aieval
    def test_returns_an_empty_list():
        return []

    @pytest.mark.aieval
    def test_returns_a_dict():
        return {"run": _run()}

    @pytest.mark.aieval
    def test_returns_nothing():
        _run()

    @pytest.mark.aieval
    def test_returns_a_tuple_of_runs():
        return (_run(), _run())
    """
)


def _plugin_args(*, autoload: bool = True) -> list[str]:
    """Load the plugin by module unless its pytest11 entry point is installed already; with
    ``autoload=False`` (no plugin loads by itself), name the installed entry point."""
    installed = {ep.name for ep in importlib.metadata.entry_points(group="pytest11")}
    if "aieval" not in installed:
        return ["-p", "aieval.testing._plugin"]
    return [] if autoload else ["-p", "aieval"]


def _pytest_env(**extra: str) -> dict[str, str]:
    """The environment of a project's pytest run that loads aieval's plugin and no other:
    the other installed plugins (hypothesis, schemathesis...) cost much of a run's start."""
    return {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **extra}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "eval_good.yaml").write_text(GOOD)
    (root / "eval_bad.yaml").write_text(BAD)
    (root / "test_marked.py").write_text(MARKED)
    (root / "test_wrong_returns.py").write_text(WRONG_RETURNS)
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    return root


def _pytest(project: Path, *args: str, autoload: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m pytest`` in ``project``; with ``autoload``, every installed plugin loads by
    itself, as in a user's session."""
    env = {"PYTHONPATH": str(ROOT / "src"), "AIEVAL_DB": str(project / "a.db")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", *_plugin_args(autoload=autoload), "-rA", *args],
        cwd=project,
        env={**os.environ, **env} if autoload else _pytest_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_passing_and_a_failing_eval_file(project: Path) -> None:
    done = _pytest(project, "--aieval-store", "none", "eval_good.yaml", "eval_bad.yaml")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "PASSED eval_good.yaml::qa-good" in out
    assert "FAILED eval_bad.yaml::qa-bad" in out
    assert "aieval run 'qa-bad'" in out and "2 samples, pass rate 0.50" in out
    assert "pass rate 0.50 is below the required 1.00; failing: b (exact_match 0.00" in out
    assert "Traceback" not in out


def test_k_selects_an_eval_and_a_pass_exits_zero(project: Path) -> None:
    done = _pytest(project, "-k", "qa-good", "eval_good.yaml", "eval_bad.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 deselected" in done.stdout
    assert (project / "a.db").is_file()  # the run is stored where $AIEVAL_DB says


def test_the_marker_checks_the_returned_run(project: Path) -> None:
    done = _pytest(project, "test_marked.py")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "PASSED test_marked.py::test_lenient_policy" in out
    assert "FAILED test_marked.py::test_strict_policy" in out
    assert "metric exact_match 0.500 is below the required 0.900" in out


def test_a_marked_test_returning_no_run_fails_naming_what_it_returned(project: Path) -> None:
    done = _pytest(project, "test_wrong_returns.py")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "AttributeError" not in out and "Traceback" not in out, out
    assert "PASSED test_wrong_returns.py::test_returns_a_tuple_of_runs" in out
    expected = {
        "test_returns_a_string": "returned str 'ok', not a RunResult",
        "test_returns_a_list_with_none": "returned a list whose item 1 is NoneType (None)",
        "test_returns_an_empty_list": "returned an empty list: no run to check",
        "test_returns_a_dict": "returned dict {'run':",
        "test_returns_nothing": "returned no run (None)",
    }
    for test, words in expected.items():
        assert f"FAILED test_wrong_returns.py::{test}" in out
        assert f"test_wrong_returns.py::{test} is marked aieval but {words}" in out, test


@pytest.mark.parametrize(
    ("value", "words"),
    [
        pytest.param("ok", "assert_run got str 'ok', not a RunResult", id="str"),
        pytest.param([None], "assert_run got a list whose item 0 is NoneType (None)", id="none"),
        pytest.param([], "assert_run got an empty list: no run to check", id="empty"),
        pytest.param(3, "assert_run got int 3, not a RunResult", id="int"),
    ],
)
def test_assert_run_names_what_it_got_instead_of_a_run(value: object, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        assert_run(value)  # type: ignore[arg-type]
    assert words in str(caught.value)


PLAIN_TEST = "def test_plain():\n    assert 1 + 1 == 2\n"


def test_a_broken_eval_file_is_named_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "eval_broken.yaml").write_text("name: x\ndataset: {rows: []}\nscorers: []\n")
    (tmp_path / "test_plain.py").write_text(PLAIN_TEST)
    done = _pytest(tmp_path, "--aieval-store", "none")
    out = done.stdout
    # one failing test, not a collection error that aborts the session
    assert done.returncode == 1, out + done.stderr
    assert "FAILED eval_broken.yaml::eval_broken.yaml" in out, out
    assert "scorers" in out and "give at least one scorer" in out, out
    assert "PASSED test_plain.py::test_plain" in out and "1 failed, 1 passed" in out, out
    assert "Traceback" not in out and "error during collection" not in out


# Files named like eval files that belong to other tools: none is collected, none aborts.
UNRELATED = {
    "eval_settings.yaml": "dataset: imagenet\nbatch_size: 32\nlr: 0.001\n",
    "eval_list.yaml": "- dataset\n- scorers\n",
    "eval_syntax.yml": "dataset: [unclosed\nscorers: x\n",
    "eval_two_docs.yaml": "dataset: a\nscorers: [x]\n---\nother: 1\n",
    "eval_binary.yaml": "\udcff",
}


def test_a_session_beside_an_unrelated_eval_settings_yaml_runs_its_tests(tmp_path: Path) -> None:
    for name, text in UNRELATED.items():
        (tmp_path / name).write_text(text, encoding="utf-8", errors="surrogateescape")
    (tmp_path / "test_plain.py").write_text(PLAIN_TEST)
    done = _pytest(tmp_path, "--aieval-store", "none")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED test_plain.py::test_plain" in done.stdout
    assert "1 passed" in done.stdout and "eval_" not in done.stdout, done.stdout


def test_no_aieval_turns_the_plugin_off(tmp_path: Path) -> None:
    installed = {ep.name for ep in importlib.metadata.entry_points(group="pytest11")}
    assert "aieval" in installed, "aieval is installed, so its pytest11 entry point is too"
    (tmp_path / "eval_good.yaml").write_text(GOOD)
    (tmp_path / "test_plain.py").write_text(PLAIN_TEST)
    done = _pytest(tmp_path, "-p", "no:aieval", autoload=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout and "qa-good" not in done.stdout, done.stdout


def test_the_entry_point_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["pytest11"] == {"aieval": "aieval.testing._plugin"}


def test_assert_run_reports_every_reason() -> None:
    rows = [
        {"id": "ok", "prompt": "?", "expected": "a", "prediction": "a"},
        {"id": "off", "prompt": "?", "expected": "a", "prediction": "b"},
    ]
    result = run(name="unit", dataset=rows, scorers=[exact_match], store=False)
    assert check_run(result, EvalPolicy(min_pass_rate=0.5)).passed
    with pytest.raises(EvalFailed) as caught:
        assert_run(result, min_metrics={"exact_match": 0.75, "token_f1": 0.1})
    message = str(caught.value)
    assert message.startswith("aieval run 'unit'")
    assert "pass rate 0.50 is below the required 1.00; failing: off (exact_match 0.00)" in message
    assert "metric exact_match 0.500 is below the required 0.750" in message
    assert "metric 'token_f1' has no value" in message


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"min_pass_rate": 1.5}, id="rate-above-one"),
        pytest.param({"min_metrics": {"f1": -0.1}}, id="negative-floor"),
        pytest.param({"max_errors": -1}, id="negative-errors"),
        pytest.param({"min_pass": 0.5}, id="unknown-option"),
    ],
)
def test_a_bad_policy_is_a_config_error(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        EvalPolicy.of(options)


def test_a_folder_pattern_collects_the_eval_files_of_that_folder(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "support.yaml").write_text(GOOD)
    (tmp_path / "evals" / "notes.yaml").write_text("owner: qa team\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\naieval_files = evals/*.yaml\n")
    done = _pytest(tmp_path, "--aieval-store", "none")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED evals/support.yaml::qa-good" in done.stdout and "1 passed" in done.stdout
