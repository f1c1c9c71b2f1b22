"""Graded and workflow runs are reported from the database's sums, equal to the record path.

The golden fixture's graded runs (gates, criteria, missing criteria, grades, workflow groups,
agents) and a workflow run with every figure a report reads from a verdict's detail (weight
coverage and unscored criteria, samples naming no workflow, agents with durations, tokens,
cost and step scores) are reported from sums and by the record path, on each backend, written
by the runner's writer and copied by ``import_run``. A run with a graded sample stored before
its figures were typed keeps the record path.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.report.golden.fixture import PAIRS
from tests.support.close import differences

import aieval.report._bundle as bundle
from aieval._records import SampleRecord, ScoreRecord
from aieval.core import CriterionValue, GateOutcome, Reason, Verdict
from aieval.report import build_report
from aieval.store import Store

SLICES = ["topic", "nested.level"]
N = 120


@pytest.fixture
def golden(golden_copy: str) -> Iterator[Store]:
    built = Store(golden_copy)
    try:
        yield built
    finally:
        built.close()


def _report(store: Store, run_id: str, least: int = 30) -> Any:
    data = build_report(store, run_id, slice_by=SLICES, bootstrap_max_n=least).to_dict()
    return json.loads(json.dumps(data, sort_keys=True))


def _refused(*_: Any, **__: Any) -> Any:
    raise AssertionError("the sums path read the samples back")


def _sums_path(store: Store, monkeypatch: pytest.MonkeyPatch, run_id: str, least: int = 30) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(Store, "sample_columns", _refused)
        patch.setattr(Store, "iter_samples", _refused)
        return _report(store, run_id, least)


def _record_path(
    store: Store, monkeypatch: pytest.MonkeyPatch, run_id: str, least: int = 30
) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(bundle, "sums_report", lambda *args: None)
        return _report(store, run_id, least)


def test_golden_graded_runs_from_sums_equal_the_record_path(
    golden: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for run_id in PAIRS["graded"]:
        summed = _sums_path(golden, monkeypatch, run_id)
        assert differences(summed, _record_path(golden, monkeypatch, run_id)) == [], run_id
        assert summed["graded"] and summed["gates"] and summed["groups"]["workflow"]
        assert summed["groups"]["agents"] and summed["grades"]["A"]
        assert summed["weighted_score"]["method"] != "percentile bootstrap"


def _workflow_verdict(i: int) -> Verdict:
    """A verdict with every graded figure the report reads, varied by ``i``."""
    share = 1.0 if i % 3 else 0.6 + (i % 5) / 20
    weighted = None if i % 29 == 7 else float(40 + (i * 37) % 60)
    unscored = [] if share == 1.0 else ["citations", "tone"][: 1 + i % 2]
    detail: dict[str, Any] = {
        "score_coverage": {"share": share, "unscored": unscored},
        "agents": {
            "planner": {
                "steps": 1 + i % 4,
                "failures": i % 2,
                "retries": i % 3,
                "duration_s": 0.25 * (i % 7),
                "tokens": 100 + i,
                "cost_usd": 0.001 * i,
                "scores": {"plan": (i % 10) / 10, "focus": 0.5},
            },
            **({"critic": {"steps": 2, "scores": {"plan": 0.9}}} if i % 4 == 0 else {}),
        },
    }
    if i % 5:  # the others fall back to the run's workflow
        detail["workflow"] = "triage" if i % 2 else "support"
    passed = weighted is not None and weighted >= 60
    return Verdict(
        passed=passed,
        reasons=() if passed else (Reason("threshold", "weighted_score", "below 60"),),
        weighted_score=weighted,
        grade=None if i % 11 == 0 else "B" if passed else "D",
        gates=(GateOutcome("schema", i % 9 != 0),),
        criteria={
            "accuracy": CriterionValue(
                normalized=(i % 10) / 10, weight=2.0, floor=0.2,
                floor_passed=(i % 10) >= 2,
            ),
        },
        grader="workflow",
        workflow=detail,
    )  # fmt: skip


def _workflow_run(store: Store, run_id: str = "wf") -> str:
    store.create_run(
        name="wf",
        n_examples=N,
        config={"workflow": {"id": "support-v2"}},
        run_id=run_id,
    )
    samples = []
    for i in range(N):
        sample = SampleRecord(
            id=f"s{i:03d}",
            index=i,
            input=f"q{i}",
            metadata={"topic": f"t{i % 4}", "nested": {"level": i % 2}},
            latency_s=0.1 * (i % 9),
            scores={"accuracy": ScoreRecord((i % 10) / 10), "style": ScoreRecord((i % 3) / 2)},
        )
        sample.verdict = _workflow_verdict(i)
        sample.passed = sample.verdict.passed
        samples.append(sample)
    store.record_samples(run_id, samples[:50])
    store.record_samples(run_id, samples[50:])
    store.finish_run(run_id, status="completed", metrics={"samples": N})
    return run_id


@pytest.fixture
def workflow_store(golden_copy: str) -> Iterator[Store]:
    """The golden store (either backend) with the workflow run written into it."""
    built = Store(golden_copy)
    try:
        _workflow_run(built)
        yield built
    finally:
        built.close()


def test_workflow_figures_from_sums_equal_the_record_path(
    workflow_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    summed = _sums_path(workflow_store, monkeypatch, "wf")
    assert differences(summed, _record_path(workflow_store, monkeypatch, "wf")) == []
    coverage = summed["weighted_score"]["coverage"]
    assert list(coverage["unscored"]) == ["citations", "tone"]  # the order first met
    groups = {g["key"]: g["samples"] for g in summed["groups"]["workflow"]}
    assert groups == {"support-v2": 24, "support": 48, "triage": 48}
    planner = next(a for a in summed["groups"]["agents"] if a["name"] == "planner")
    assert (
        planner["runs"] == N
        and planner["cost_usd"]
        and set(planner["scores"])
        == {
            "focus",
            "plan",
        }
    )
    # the scorer of a criterion's name is shown once, as the criterion
    assert [c["name"] for c in summed["criteria"]] == ["accuracy", "style"]


def test_a_copied_workflow_run_is_summed_too(
    workflow_store: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    copy = Store(tmp_path / "copy.db")
    try:
        row = workflow_store.get_run("wf")
        copy.import_run(row, workflow_store.stored_samples("wf"))
        summed = _sums_path(copy, monkeypatch, "wf")
        assert differences(summed, _record_path(workflow_store, monkeypatch, "wf")) == []
    finally:
        copy.close()


def test_graded_runs_stored_before_keep_the_record_path(
    workflow_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a graded sample written with its gates and criteria only (before the figures were typed)
    workflow_store._write(
        "UPDATE samples SET verdict_values = 1 WHERE run_id = ? AND sample_id = ?", ("wf", "s007")
    )
    assert workflow_store.graded_sums("wf") is None
    read: list[str] = []
    original = Store.iter_samples

    def counted(self: Store, run_id: str, **kwargs: Any) -> Any:
        read.append(run_id)
        return original(self, run_id, **kwargs)

    monkeypatch.setattr(Store, "iter_samples", counted)
    report = _report(workflow_store, "wf")
    assert read == ["wf"] and report["weighted_score"]["coverage"]


def test_floors_that_differ_keep_the_record_path(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    try:
        _workflow_run(store)
        store._write(
            "UPDATE sample_values SET floor = 0.3 WHERE run_id = 'wf' AND sample_id = 's001'"
            " AND kind = 'criterion'",
            (),
        )
        assert store.graded_sums("wf") is not None
        report = build_report(store, "wf", bootstrap_max_n=30).to_dict()
        assert report["criteria"][0]["floor"] == 0.2  # the record path: the last sample's
    finally:
        store.close()


AV2 = Path(__file__).parents[1] / "conformance" / "av2"
AV2_LOGS = ("example_code_review_run.json", "code_review_output.json")
AV2_DEFINITIONS = (
    None,
    "bug_resolution.yaml",
    "code_review.yaml",
    "conditional_branching.yaml",
    "fullstack_generation.yaml",
    "iterative_review.yaml",
    "test_deterministic.yaml",
)


def test_conformance_workflow_runs_from_sums_equal_the_record_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real agent-workflow logs graded by each real definition, one run per definition."""
    from aieval.workflows import evaluate_run, load_run, load_workflow
    from aieval.workflows._verdict import workflow_verdict

    logs = [load_run(AV2 / name) for name in AV2_LOGS]
    store = Store(tmp_path / "runs.db")
    try:
        for number, definition in enumerate(AV2_DEFINITIONS):
            workflow = load_workflow(AV2 / definition) if definition else None
            run_id = f"av2-{number}"
            store.create_run(name=run_id, n_examples=40, run_id=run_id)
            samples = []
            for i in range(40):
                sample = SampleRecord(id=f"s{i:02d}", index=i, input=f"q{i}")
                evaluation = evaluate_run(logs[i % 2], workflow=workflow)
                sample.verdict = workflow_verdict(evaluation, sample)
                sample.passed = sample.verdict.passed
                samples.append(sample)
            store.record_samples(run_id, samples)
            store.finish_run(run_id, status="completed", metrics={"samples": 40})
            # half the logs have a weighted score: 20 values, each a closed-form column
            summed = _sums_path(store, monkeypatch, run_id, least=10)
            record = _record_path(store, monkeypatch, run_id, least=10)
            assert differences(summed, record) == [], definition
            assert summed["graded"] and summed["gates"] and summed["groups"]["agents"]
    finally:
        store.close()


def test_figures_the_rows_cannot_hold_keep_the_record_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A share that is not finite, or a count beyond 31 bits, writes no figure of the sample
    (its run keeps the record path); the write itself goes through on both kinds."""
    store = Store(tmp_path / "runs.db")
    try:
        _workflow_run(store)
        odd = [
            {"score_coverage": {"share": math.inf, "unscored": ["tone"]}},
            {"agents": {"planner": {"steps": 2**40}}},
        ]
        for k, detail in enumerate(odd):
            run_id = f"odd{k}"
            store.create_run(name=run_id, n_examples=N, run_id=run_id)
            samples = []
            for i in range(N):
                sample = SampleRecord(id=f"s{i:03d}", index=i, input=f"q{i}")
                verdict = _workflow_verdict(i)
                if i == 3:
                    verdict = Verdict(passed=False, weighted_score=10.0, grade="D", workflow=detail)
                sample.verdict = verdict
                samples.append(sample)
            store.record_samples(run_id, samples)
            store.finish_run(run_id, status="completed", metrics={"samples": N})
            assert store.graded_sums(run_id) is None
            report = _record_path(store, monkeypatch, run_id)
            assert report["samples"] == N and report["graded"]
        assert store.graded_sums("wf") is not None
    finally:
        store.close()


def test_the_benchmarks_generated_runs_are_what_the_writer_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bench/graded_report.py writes its runs in SQL: each sample's typed columns and rows are
    those the writer derives from its verdict text, and its report from sums is the record
    path's."""
    import importlib.util

    from aieval.store._verdict_columns import stored_graded_columns

    path = Path(__file__).parents[2] / "bench" / "graded_report.py"
    spec = importlib.util.spec_from_file_location("graded_report_bench", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    location = str(tmp_path / "bench.db")
    ids = bench.generate_runs(location, 200)
    store = Store(location)
    try:
        run_id = ids["candidate"]
        for sample_id, text, plain, level, grade in store._read(
            "SELECT sample_id, verdict, verdict_plain, verdict_values, grade FROM samples"
            " WHERE run_id = ? AND idx < 24",
            (run_id,),
        ):
            typed, graded, rows = stored_graded_columns(text, None)
            stored = store._read(
                "SELECT kind, name, value, floor, flag FROM sample_values WHERE run_id = ?"
                " AND sample_id = ?",
                (run_id, sample_id),
            )
            assert sorted(stored) == sorted(r[1:] for r in rows), sample_id
            assert (plain, level, grade) == (typed[2], graded[2], graded[0])
        summed = _sums_path(store, monkeypatch, run_id, least=50)
        assert differences(summed, _record_path(store, monkeypatch, run_id, least=50)) == []
    finally:
        store.close()
