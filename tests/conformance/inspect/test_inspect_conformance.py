"""The inspect_ai logs of this folder (written by inspect_ai, see make_logs.py), imported.

Every expected number is read from the log with inspect_ai's own reader, never typed in here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.log import EvalLog, read_eval_log

from aieval import run
from aieval.datasets import (
    Dataset,
    inspect_example,
    inspect_log_rows,
    load_dataset,
    load_inspect_log,
    recorded_score,
)
from aieval.report import compare_runs
from aieval.store import Store

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
FULL = ["qa_baseline.eval", "qa_baseline.json", "qa_candidate.json"]
DIFFERENT_VERSIONS = "different dataset versions"


def _log(name: str) -> EvalLog:
    return read_eval_log(str(HERE / name))


def _tokens(log: EvalLog) -> tuple[int, int]:
    """The run's input and output tokens as inspect_ai's ``stats.model_usage`` has them."""
    usage = log.stats.model_usage.values()
    return sum(u.input_tokens for u in usage), sum(u.output_tokens for u in usage)


def _accuracy(log: EvalLog, scorer: str) -> float:
    assert log.results is not None
    (score,) = [s for s in log.results.scores if s.name == scorer]
    return float(score.metrics["accuracy"].value)


@pytest.mark.parametrize("name", FULL)
def test_each_log_loads_and_grades_like_inspect_ai_graded_it(name: str) -> None:
    log = _log(name)
    result = run(
        name="qa",
        dataset=str(HERE / name),  # a log path is a dataset, as in an eval file
        scorers=[recorded_score("match"), recorded_score("includes"), "exact_match"],
        store=False,
    )
    assert result.error_count == 0 and len(result.samples) == len(log.samples or [])
    assert result.metrics["match"] == pytest.approx(_accuracy(log, "match"))
    assert result.metrics["includes"] == pytest.approx(_accuracy(log, "includes"))
    # tokens and timings are inspect_ai's: the run's totals are its stats.model_usage
    assert (result.summary["input_tokens"], result.summary["output_tokens"]) == _tokens(log)
    recorded = {str(s.id): s for s in log.samples or []}
    for sample in result.samples:
        logged = recorded[sample.id]
        (usage,) = logged.model_usage.values()
        assert (sample.input_tokens, sample.output_tokens) == (
            usage.input_tokens,
            usage.output_tokens,
        )
        assert sample.latency_s == pytest.approx(logged.total_time)
        assert sample.metadata["inspect_working_time"] == pytest.approx(logged.working_time)
        (call,) = sample.calls
        assert (call.purpose, call.provider, call.model) == ("target", "inspect_ai", log.eval.model)


def test_a_sample_without_output_is_stored_as_its_error() -> None:
    log = _log("qa_partial.eval")
    by_id = {str(s.id): s for s in log.samples or []}
    assert by_id["q2"].error is None and not by_id["q2"].output.choices  # as inspect_ai wrote it
    rows = {r["id"]: r for r in inspect_log_rows(HERE / "qa_partial.eval")}
    assert rows["q2"]["prediction"] is None
    result = run(
        name="partial", dataset=str(HERE / "qa_partial.eval"), scorers=["exact_match"], store=False
    )
    errors = {s.id: s.error for s in result.samples}
    assert errors == {
        "q1": None,
        "q2": "inspect_ai sample has no output: the model gave no completion",
        "q3": "inspect_ai sample error: RuntimeError('tool crashed')",
    }
    assert result.error_count == 2 and result.metrics["exact_match"] == 1.0
    # the sample that answered is graded; its usage is still counted
    assert (result.summary["input_tokens"], result.summary["output_tokens"]) == _tokens(log)


def _warnings(db: Path, base: str, cand: str) -> list[str]:
    runs = [
        run(name="qa", dataset=str(HERE / item), scorers=["exact_match"], store=db).id
        for item in (base, cand)
    ]
    warnings: list[str] = compare_runs(Store(db), *runs).to_dict()["warnings"]
    return warnings


@pytest.mark.parametrize(
    ("base", "cand"),
    [
        pytest.param("qa_baseline.eval", "qa_baseline.json", id="one-log-two-formats"),
        pytest.param("qa_baseline.eval", "qa_candidate.json", id="two-runs"),
    ],
)
def test_logs_of_the_same_samples_compare_without_a_dataset_warning(
    tmp_path: Path, base: str, cand: str
) -> None:
    assert load_dataset(HERE / base).scan().version == load_dataset(HERE / cand).scan().version
    warnings = _warnings(tmp_path / "runs.db", base, cand)
    assert not [w for w in warnings if DIFFERENT_VERSIONS in w], warnings


def test_a_changed_sample_is_a_different_dataset_version() -> None:
    rows = inspect_log_rows(HERE / "qa_baseline.eval")
    same = Dataset(rows, example_key=inspect_example).scan().version
    assert same == load_inspect_log(HERE / "qa_baseline.eval").scan().version
    rows[0] = {**rows[0], "input": rows[0]["input"] + " (reworded)"}
    assert Dataset(rows, example_key=inspect_example).scan().version != same


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # a wide page: a table row is read whole (in a 100-column log its cells would wrap)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "AIEVAL_DB": str(cwd / "runs.db"),
           "COLUMNS": "200"}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "aieval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    ("log_name", "dataset"),
    [
        pytest.param("qa_baseline.eval", "qa_baseline.eval", id="eval"),
        pytest.param("qa_candidate.json", "{path: qa_candidate.json}", id="json"),
    ],
)
def test_an_eval_file_whose_dataset_is_an_inspect_log_with_its_tokens_and_timings(
    tmp_path: Path, log_name: str, dataset: str
) -> None:
    shutil.copyfile(HERE / log_name, tmp_path / log_name)
    (tmp_path / "eval_qa.yaml").write_text(
        f"name: qa-inspect\ndataset: {dataset}\nscorers: [exact_match]\n"
    )
    log = _log(log_name)
    tokens_in, tokens_out = _tokens(log)
    done = _cli(tmp_path, "run", "eval_qa.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    line = " ".join(done.stdout.split())  # the summary line may wrap at the console's width
    assert f"tokens in/out target {tokens_in}/{tokens_out}" in line, done.stdout
    assert "latency p50 " in done.stdout, done.stdout

    shown = _cli(tmp_path, "show", "qa-inspect")
    assert shown.returncode == 0 and "3 samples" in shown.stdout, shown.stdout + shown.stderr
    # the stored samples (the SQLite file the command wrote) hold each sample's usage and time
    store = Store(tmp_path / "runs.db")
    recorded = {str(s.id): s for s in log.samples or []}
    stored = list(store.iter_samples(store.get_run("qa-inspect").id))
    assert len(stored) == len(recorded)
    for sample in stored:
        logged = recorded[sample.id]
        assert sample.latency_s == pytest.approx(logged.total_time)
        assert sample.input_tokens == sum(u.input_tokens for u in logged.model_usage.values())
        assert sample.output_tokens == sum(u.output_tokens for u in logged.model_usage.values())
        assert [c.model for c in sample.calls] == list(logged.model_usage)

    report = _cli(tmp_path, "report", "qa-inspect")
    assert report.returncode == 0, report.stdout + report.stderr
    assert "latency, tokens, cost" in report.stdout
    tokens = f"tokens in/out target {tokens_in}/{tokens_out} "
    usage_row = next(line for line in report.stdout.splitlines() if tokens in line)
    times = [s.total_time for s in log.samples or [] if s.total_time is not None]
    mean = f" {sum(times) / len(times):.2f}s "
    assert mean in usage_row, report.stdout
