"""A comparison of runs of epochs shows each side's pass^k and pass@k and each side's variance
split, as the runs' summaries stored them, in JSON, text, Markdown, HTML and the GitHub comment."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from tests.report.golden.fixture import golden_path

from aieval._records import CallRecord, SampleRecord, ScoreRecord
from aieval.report import (
    compare_runs,
    comparison_schema,
    render_github,
    render_html,
    render_markdown,
    render_text,
)
from aieval.store import Store

N = 60


def _summary(hat2: float, share: float) -> dict[str, Any]:
    split = {"examples": N, "answers": 2 * N, "judge_samples": 3.0, "judge_variance": 0.01,
             "between_epochs": 0.05, "answer_variance": 0.04, "answer_share": share,
             "judge_share": 1 - share}  # fmt: skip
    return {"epochs": {"n": 2, "examples": N, "complete": N,
                       "pass_at_k": {"1": 0.8, "2": 0.9}, "pass_hat_k": {"1": 0.8, "2": hat2},
                       "variance": {"judge": split}}}  # fmt: skip


def _run(store: Store, hat2: float, share: float, *, epochs: bool = True) -> str:
    run_id = store.create_run(name="ep", dataset_hash="same", config={"epochs": 2})
    store.record_samples(run_id, [
        SampleRecord(id=f"e{i}#{k}", index=i, input=f"q{i}", prediction="p", expected="g",
                     passed=(i + k) % 5 != 0, epoch=k,
                     scores={"exact": ScoreRecord(float((i + k) % 5 != 0))})
        for i in range(N) for k in (1, 2)
    ])  # fmt: skip
    store.finish_run(run_id, status="completed", metrics=_summary(hat2, share) if epochs else {})
    return run_id


@pytest.fixture
def doc(store: Store) -> dict[str, Any]:
    comparison = compare_runs(store, _run(store, 0.612, 0.25), _run(store, 0.734, 0.875))
    data: dict[str, Any] = comparison.to_dict()
    return data


def test_each_side_keeps_its_stored_epochs(doc: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(comparison_schema()).validate(doc)
    assert doc["epochs"]["baseline"]["pass_hat_k"]["2"] == 0.612
    assert doc["epochs"]["candidate"]["pass_hat_k"]["2"] == 0.734
    assert doc["epochs"]["candidate"]["variance"]["judge"]["answer_share"] == 0.875


@pytest.mark.parametrize(
    "render",
    [
        pytest.param(lambda d: render_text(d, width=200), id="text"),
        pytest.param(render_html, id="html"),
        pytest.param(render_markdown, id="markdown"),
        pytest.param(render_github, id="github"),
    ],
)
def test_every_format_shows_both_sides_pass_hat_k_and_variance(
    doc: dict[str, Any], render: Any
) -> None:
    out = " ".join(render(doc).replace("\\", "").split())
    assert "pass^k baseline" in out and "pass^k candidate" in out
    assert "61.2%" in out and "73.4%" in out  # pass^2 of each side
    assert "25.0%" in out and "87.5%" in out  # each side's answers' share of the variance


def test_runs_without_epochs_show_none(store: Store) -> None:
    doc = compare_runs(store, _run(store, 0.5, 0.5, epochs=False), _run(store, 0.5, 0.5,
                       epochs=False)).to_dict()  # fmt: skip
    assert "epochs" not in doc
    assert "pass^k" not in render_text(doc, width=200)


@pytest.fixture
def mixed() -> dict[str, Any]:
    """A regression of an example answered once in the baseline and over epochs in the
    candidate (a run with epochs pairs with one without)."""
    row = {"id": "ex1", "delta": -37.5, "changes": ["no longer passes"],
           "baseline": {"passed": True, "grade": None, "weighted_score": 100.0},
           "candidate": {"passed": False, "grade": None, "weighted_score": 62.5,
                         "pass_share": 0.25}}  # fmt: skip
    data: dict[str, Any] = json.loads(golden_path().read_text(encoding="utf-8"))["compare:epochs"]
    data["regressions"] = [row]
    data["regressions_count"] = 1
    return data


@pytest.mark.parametrize(
    "render",
    [
        pytest.param(lambda d: render_text(d, width=200), id="text"),
        pytest.param(render_html, id="html"),
        pytest.param(render_markdown, id="markdown"),
        pytest.param(render_github, id="github"),
    ],
)
def test_a_regression_shows_the_same_pass_measure_on_both_sides(
    mixed: dict[str, Any], render: Any
) -> None:
    out = " ".join(render(mixed).replace("\\", "").split())
    # the share of epochs that passed on both sides, not a majority flag beside a share
    assert "100% passed 100.0" in out.replace("</span>", "")
    assert "25% passed 62.5" in out.replace("</span>", "")


def test_an_inconclusive_comparison_of_a_noisy_judge_speaks_of_judge_samples(
    store: Store,
) -> None:
    few = 30  # fewer paired examples than min_paired: inconclusive

    def run(share: float) -> str:
        run_id = store.create_run(name="ep", dataset_hash="same", config={"epochs": 2})
        store.record_samples(run_id, [
            SampleRecord(id=f"e{i}#{k}", index=i, input=f"q{i}", prediction="p", expected="g",
                         passed=True, epoch=k, scores={"exact": ScoreRecord(1.0)})
            for i in range(few) for k in (1, 2)
        ])  # fmt: skip
        store.finish_run(run_id, status="completed", metrics=_summary(0.7, share))
        return run_id

    comparison = compare_runs(store, run(0.8), run(0.25))
    assert comparison.outcome == "inconclusive"
    hint = [w for w in comparison.warnings if "judge samples per answer" in w]
    assert hint == [
        "the judge's own noise is 75% of judge's variance in the candidate (3.0 verdicts per "
        "answer): to decide, more judge samples per answer narrow the interval as well as more "
        "examples or epochs do (aieval compare's sample sizes count examples only)"
    ]
    for render in (render_html, render_markdown, render_github):
        assert "judge samples per answer" in render(comparison).replace("\\", "")
    assert "judge samples per answer" in " ".join(render_text(comparison, width=200).split())


def test_a_variance_split_on_cached_judge_verdicts_is_flagged(store: Store) -> None:
    def run(cached: bool) -> str:
        run_id = store.create_run(name="ep", dataset_hash="same", config={"epochs": 2})
        store.record_samples(run_id, [
            SampleRecord(id=f"e{i}#{k}", index=i, input=f"q{i}", prediction="p", expected="g",
                         passed=True, epoch=k, scores={"exact": ScoreRecord(1.0)},
                         calls=[CallRecord("target"),
                                CallRecord("judge:judge", cached=cached and i < 5)])
            for i in range(N) for k in (1, 2)
        ])  # fmt: skip
        store.finish_run(run_id, status="completed", metrics=_summary(0.7, 0.5))
        return run_id

    comparison = compare_runs(store, run(False), run(True))
    flagged = [w for w in comparison.warnings if "cached judge verdicts" in w]
    assert flagged == [
        "the candidate's answer/judge variance split rests on 10 cached judge verdicts: "
        "replayed from the response cache, not fresh samples of the judge, so its judge "
        "variance may understate the judge's noise (re-run with the judge's cache off)"
    ]
    for render in (render_html, render_markdown, render_github):
        assert "rests on 10 cached judge verdicts" in render(comparison).replace("\\", "")
    assert "rests on 10 cached judge verdicts" in " ".join(
        render_text(comparison, width=200).split()
    )
