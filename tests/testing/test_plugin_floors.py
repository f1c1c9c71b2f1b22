"""The 0.1 floor in the pytest plugin's policy: ten scores of 0.1 meet ``min_metrics`` of 0.1,
in ``check_run`` and through a real ``python -m pytest`` run; a mean truly below still fails."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.testing.test_pytest_plugin import _pytest

from aieval import run, scorer
from aieval.runner import RunResult
from aieval.testing import EvalPolicy, check_run

MARKED = textwrap.dedent(
    """
    import pytest
    from aieval import run, scorer

    ROWS = [{"id": str(i), "prompt": "?", "expected": "a", "prediction": "a"} for i in range(10)]

    @scorer(name="tenth")
    def tenth(example, output):
        return 0.1

    @scorer(name="under")
    def under(example, output):
        return 0.0999

    @pytest.mark.aieval(min_metrics={"tenth": 0.1}, min_pass_rate=1.0)
    def test_ten_tenths_meet_a_tenth():
        return run(name="tenths", dataset=ROWS, scorers=[tenth], store=False,
                   pass_threshold=0.1)

    @pytest.mark.aieval(min_metrics={"under": 0.1}, min_pass_rate=0.0)
    def test_a_mean_below_a_tenth_fails():
        return run(name="under", dataset=ROWS, scorers=[under], store=False)
    """
)


def _ten(value: float) -> RunResult:
    @scorer(name="s")
    def constant(example: object, output: object) -> float:
        return value

    rows = [{"id": str(i), "prompt": "?", "expected": "a", "prediction": "a"} for i in range(10)]
    return run(name="floor", dataset=rows, scorers=[constant], store=False, pass_threshold=value)


def test_the_0_1_floor_is_met_by_ten_scores_of_0_1() -> None:
    result = _ten(0.1)
    assert result.metrics["s"] < 0.1  # the plain mean: 0.09999999999999999
    assert result.pass_rate == 1.0, "every sample meets the per-sample pass threshold of 0.1"
    verdict = check_run(result, EvalPolicy(min_metrics={"s": 0.1}, min_pass_rate=1.0))
    assert verdict.passed, verdict.message()


def test_a_mean_truly_below_the_floor_fails_and_reads_below() -> None:
    verdict = check_run(_ten(0.0999), EvalPolicy(min_metrics={"s": 0.1}))
    assert not verdict.passed
    assert verdict.reasons == ["metric s 0.0999 is below the required 0.1000"]


def test_the_plugin_holds_a_run_to_the_0_1_floor(tmp_path: Path) -> None:
    (tmp_path / "test_floors.py").write_text(MARKED)
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    done = _pytest(tmp_path, "test_floors.py")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "PASSED test_floors.py::test_ten_tenths_meet_a_tenth" in out
    assert "FAILED test_floors.py::test_a_mean_below_a_tenth_fails" in out
    assert "metric under 0.0999 is below the required 0.1000" in out


def test_the_runs_own_minimums_fail_its_test() -> None:
    # the eval's own min_pass_rate (what makes ``aieval run`` exit non-zero) binds a test too,
    # even under a policy that asks for less
    rows = [{"id": str(i), "prompt": "?", "expected": "a", "prediction": "a" if i else "b"}
            for i in range(4)]  # fmt: skip
    from aieval.scorers import exact_match

    result = run(name="own", dataset=rows, scorers=[exact_match], store=False,
                 min_pass_rate=0.9)  # fmt: skip
    assert result.pass_rate == 0.75
    verdict = check_run(result, EvalPolicy(min_pass_rate=0.5))
    assert not verdict.passed
    assert verdict.reasons == [
        "the run's own minimum was missed: pass rate 0.75 below its minimum 0.9"
    ]
