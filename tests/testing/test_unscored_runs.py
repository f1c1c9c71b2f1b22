"""A run in which a scorer scored nothing is not ok and fails every policy; n/a is no error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.testing.test_pytest_plugin import _plugin_args, _pytest_env

from aieval import RunResult, Score, run
from aieval.testing import EvalPolicy, check_run

ROOT = Path(__file__).resolve().parents[2]


def never(prediction: str, expected: str) -> Score:
    return Score(None, reason="not applicable here")


def order(prediction: str, expected: str) -> Score | float:
    if expected == "skip":
        return Score(None, reason="no order number")
    return 1.0 if prediction == expected else 0.0


def rows(*expected: str) -> list[dict[str, str]]:
    return [
        {"id": f"r{i}", "prompt": "p", "expected": e, "prediction": e}
        for i, e in enumerate(expected)
    ]


def test_a_run_that_scored_nothing_is_not_ok_and_fails_the_policy() -> None:
    result = run(name="none", dataset=rows("a", "b"), scorers=[never], store=False)
    assert isinstance(result, RunResult)
    assert not result.ok
    assert result.problems == ["scorer 'never' scored no sample of 2 (n/a 2, errors 0)"]
    assert result.unscored_scorers == ["never"]
    assert (result.errors, result.error_count, result.not_applicable) == (0, 0, {"never": 2})
    assert result.unscored == 2 and result.pass_rate == 0.0
    assert not any(s.passed for s in result.samples)
    assert all(s.unscored and not s.errors for s in result.samples)
    verdict = check_run(result, EvalPolicy(min_pass_rate=0.0))
    assert not verdict.passed
    assert verdict.reasons == [
        "scorer 'never' scored no sample (n/a 2): a run that scored nothing does not pass"
    ]
    assert result.to_dict()["problems"] == result.problems


def test_not_applicable_is_not_an_error_and_the_run_passes() -> None:
    result = run(name="some", dataset=rows("skip", "x", "skip"), scorers=[order], store=False)
    assert result.ok and result.problems == []
    stats = result.summary.scorers["order"]
    assert (stats.count, stats.errors, stats.not_applicable) == (1, 0, 2)
    assert result.not_applicable == {"order": 2} and result.errors == 0
    assert result.unscored == 2 and result.pass_rate == 1 / 3
    assert [s.passed for s in result.samples] == [False, True, False]
    lenient = check_run(result, EvalPolicy(min_pass_rate=0.3))
    assert lenient.passed, lenient.message()
    assert "errors 0; n/a 2; unscored 2" in lenient.summary


def test_a_sample_with_one_score_is_not_unscored() -> None:
    result = run(name="mixed", dataset=rows("skip", "x"), scorers=[order, never], store=False)
    assert [s.unscored for s in result.samples] == [True, False]
    assert [s.passed for s in result.samples] == [False, True]
    assert result.unscored_scorers == ["never"] and not result.ok


EVAL = """name: nothing-scored
dataset: rows.jsonl
imports: [checks.py]
scorers: [never]
"""

CHECKS = """from aieval import Score, scorer


@scorer
def never(prediction, expected):
    return Score(None, reason="not applicable here")
"""


def test_the_plugin_default_policy_fails_a_run_that_scored_nothing(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text(
        '{"id": "a", "prompt": "p", "expected": "x", "prediction": "x"}\n'
    )
    (tmp_path / "checks.py").write_text(CHECKS)
    (tmp_path / "eval_nothing.yaml").write_text(EVAL)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\naddopts = -p no:cacheprovider\naieval_min_pass_rate = 0.0\n"
    )
    plugin = _plugin_args(autoload=False)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *plugin, "-rA", "--aieval-store", "none"],
        cwd=tmp_path,
        env=_pytest_env(PYTHONPATH=str(ROOT / "src")),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED eval_nothing.yaml::nothing-scored" in done.stdout
    assert "scorer 'never' scored no sample (n/a 1)" in done.stdout
