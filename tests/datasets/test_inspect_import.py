"""inspect_ai logs written by inspect_ai itself (offline mockllm model), imported and compared."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.scorer import includes, match
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from aieval import run
from aieval.datasets import inspect_log_rows, load_inspect_log, recorded_score
from aieval.errors import DatasetError
from aieval.report import compare_runs
from aieval.scorers import exact_match
from aieval.store import Store

SAMPLES = [
    Sample(input="What is 2+2?", target="4", id="q1", metadata={"topic": "math"}),
    Sample(input="Capital of France?", target=["Paris", "paris"], id="q2"),
    Sample(input="Largest planet?", target="Jupiter", id="q3"),
]


def _answers(good: set[str]) -> Any:
    """A mockllm output function: right answers for the questions in ``good``."""
    right = {"2+2": "4", "France": "Paris", "planet": "Jupiter"}

    def answer(messages: list[Any], *_: Any) -> ModelOutput:
        question = messages[-1].text
        key = next(k for k in right if k in question)
        output = ModelOutput.from_content("mockllm", right[key] if key in good else "no idea")
        # Usage set here: otherwise mockllm counts tokens with an encoding it downloads.
        output.usage = ModelUsage(input_tokens=5, output_tokens=2, total_tokens=7)
        return output

    return answer


@solver
def _explode(ids: set[str]) -> Solver:
    """A solver that raises for the samples in ``ids``: inspect_ai records them as errored."""

    async def solve(state: TaskState, _generate: Generate) -> TaskState:
        if str(state.sample_id) in ids:
            raise RuntimeError("solver exploded")
        return state

    return solve


def _log(tmp: Path, good: set[str], epochs: int = 1, errored: set[str] | None = None) -> Path:
    solvers = [_explode(errored), generate()] if errored else [generate()]
    task = Task(dataset=SAMPLES, solver=solvers, scorer=[match(), includes()], name="qa")
    logs = inspect_eval(
        task,
        model="mockllm/model",
        model_args={"custom_outputs": _answers(good)},
        log_dir=str(tmp),
        display="none",
        epochs=epochs,
        fail_on_error=False,
    )
    assert logs[0].status == "success"
    return Path(logs[0].location)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("inspect")
    baseline = _log(root / "baseline", good={"2+2"})
    candidate = _log(root / "candidate", good={"2+2", "France", "planet"})
    return baseline, candidate


def test_a_log_imports_as_recorded_predictions_with_scores(logs: tuple[Path, Path]) -> None:
    rows = {r["id"]: r for r in inspect_log_rows(logs[0])}
    assert set(rows) == {"q1", "q2", "q3"}
    q1, q2 = rows["q1"], rows["q2"]
    assert (q1["input"], q1["expected"], q1["prediction"]) == ("What is 2+2?", "4", "4")
    assert q2["expected"] == ["Paris", "paris"] and q2["prediction"] == "no idea"
    assert q1["scores"]["match"] == {"value": 1.0, "raw": "C", "answer": "4", "explanation": "4"}
    assert q2["scores"]["match"]["value"] == 0.0 and q2["scores"]["match"]["raw"] == "I"
    assert q1["metadata"]["topic"] == "math" and q1["metadata"]["inspect_task"] == "qa"
    assert q1["metadata"]["inspect_model"] == "mockllm/model"


def test_imported_runs_are_graded_and_compared(logs: tuple[Path, Path], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    scorers = [recorded_score("match"), exact_match]
    base = run(name="qa", dataset=load_inspect_log(logs[0]), scorers=scorers, store=db)
    cand = run(name="qa", dataset=load_inspect_log(logs[1]), scorers=scorers, store=db)
    assert base.metrics["match"] == pytest.approx(1 / 3)
    assert cand.metrics["match"] == 1.0
    # aieval's own exact_match grades the same recorded predictions.
    assert base.metrics["exact_match"] == pytest.approx(1 / 3)
    comparison = compare_runs(Store(db), base.id, cand.id).to_dict()
    metrics = {m["name"]: m for m in comparison["metrics"]}
    assert comparison["paired"] == 3
    assert (metrics["match"]["baseline"], metrics["match"]["candidate"]) == (
        pytest.approx(1 / 3),
        1.0,
    )
    assert comparison["improvements_count"] == 2 and comparison["regressions_count"] == 0


def test_epochs_get_distinct_ids_or_can_be_picked(tmp_path: Path) -> None:
    path = _log(tmp_path, good={"2+2"}, epochs=2)
    ids = sorted(r["id"] for r in inspect_log_rows(path))
    assert ids == ["q1#1", "q1#2", "q2#1", "q2#2", "q3#1", "q3#2"]
    assert sorted(r["id"] for r in inspect_log_rows(path, epoch=2)) == ["q1", "q2", "q3"]


def test_a_missing_or_foreign_file_is_a_dataset_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        load_inspect_log(tmp_path / "nope.eval")
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"hello": 1}')
    with pytest.raises(DatasetError, match=r"bogus\.json"):
        load_inspect_log(bogus)


def test_a_missing_recorded_score_is_an_error_on_the_sample(logs: tuple[Path, Path]) -> None:
    result = run(
        name="qa", dataset=load_inspect_log(logs[0]), scorers=[recorded_score("f1")], store=False
    )
    errors = [message for s in result.samples for message in s.errors.values()]
    assert len(errors) == 3 and all("no recorded score 'f1'" in str(e) for e in errors)


INSPECT_ERROR = "inspect_ai sample error: RuntimeError('solver exploded')"


@pytest.mark.parametrize(
    "errored",
    [pytest.param({"q1", "q2", "q3"}, id="every-sample"), pytest.param({"q2"}, id="one-sample")],
)
def test_an_errored_sample_is_stored_with_inspect_s_error(
    tmp_path: Path, errored: set[str]
) -> None:
    path = _log(tmp_path, good={"2+2", "France", "planet"}, errored=errored)
    rows = {r["id"]: r for r in inspect_log_rows(path)}
    assert rows["q2"]["prediction"] is None and rows["q2"]["recorded_error"] == INSPECT_ERROR
    assert rows["q2"]["metadata"]["inspect_error"] == "RuntimeError('solver exploded')"
    result = run(
        name="insp", dataset=load_inspect_log(path), scorers=[recorded_score("match")], store=False
    )
    errors = {s.id: s.error for s in result.samples}
    assert {i for i, e in errors.items() if e is not None} == errored
    assert all(errors[i] == INSPECT_ERROR for i in errored)
    assert result.summary["target_errors"] == result.error_count == len(errored)
    fine = {"q1", "q2", "q3"} - errored
    assert all("recorded_error" not in rows[i] or rows[i]["recorded_error"] is None for i in fine)
    if fine:
        assert result.metrics["match"] == 1.0


def _silent(messages: list[Any], *_: Any) -> ModelOutput:
    """A mockllm output function whose completion is an empty string."""
    output = ModelOutput.from_content("mockllm", "")
    output.usage = ModelUsage(input_tokens=3, output_tokens=0, total_tokens=3)
    return output


def _one_sample_log(tmp: Path, **task_options: Any) -> Path:
    task = Task(
        dataset=[Sample(input="Say nothing.", target="", id="s1")],
        solver=[generate()],
        scorer=[match()],
        name="quiet",
        **task_options,
    )
    (log,) = inspect_eval(
        task,
        model="mockllm/model",
        model_args={"custom_outputs": _silent},
        log_dir=str(tmp),
        display="none",
    )
    return Path(log.location)


def test_a_sample_that_hit_a_limit_without_output_is_its_error(tmp_path: Path) -> None:
    path = _one_sample_log(tmp_path, message_limit=1)  # the prompt alone reaches the limit
    result = run(name="limit", dataset=str(path), scorers=[exact_match], store=False)
    (sample,) = result.samples
    assert sample.prediction is None and sample.scores == {}
    assert sample.error == (
        "inspect_ai sample has no output: the model gave no completion "
        "(it hit its message limit of 1)"
    )
    assert result.error_count == 1


def test_an_empty_completion_is_an_answer_and_is_graded(tmp_path: Path) -> None:
    path = _one_sample_log(tmp_path)
    (row,) = inspect_log_rows(path)
    assert row["prediction"] == "" and "recorded_error" not in row
    result = run(name="empty", dataset=str(path), scorers=[exact_match], store=False)
    (sample,) = result.samples
    assert sample.error is None and sample.scores["exact_match"].value == 1.0
    assert (sample.input_tokens, sample.output_tokens) == (3, 0)
