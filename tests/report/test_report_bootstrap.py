"""build_report bootstraps every column from one resample stream: the same intervals as one
``bootstrap_ci`` per column, to the last digit, for columns of equal and unequal length."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from aieval import Score, run
from aieval.report import build_report
from aieval.scorers import exact_match, scorer, token_f1
from aieval.stats import bootstrap_ci
from aieval.store import Store


@scorer
def length_ratio(prediction: str, expected: str) -> Score:
    """n/a on every third row, so this column is shorter than the others."""
    if len(expected) % 3 == 0:
        return Score(None)
    return Score(min(len(prediction), len(expected)) / max(len(prediction), len(expected), 1))


def test_report_intervals_equal_one_bootstrap_per_column(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"r{i}",
            "input": f"q{i}",
            "expected": "x" * (i % 7 + 1),
            "prediction": "x" * (i % 5),
        }
        for i in range(300)
    ]
    store = Store(tmp_path / "runs.db")
    result = run(
        name="cols", dataset=rows, scorers=[exact_match, token_f1, length_ratio], store=store
    )
    data = build_report(store, result.id, n_resamples=400, seed=11).to_dict()
    samples = list(store.iter_samples(result.id))
    by_name = {c["name"]: c for c in data["criteria"]}
    lengths = set()
    for name in ("exact_match", "token_f1", "length_ratio"):
        values = [s.values[name] for s in samples if s.values.get(name) is not None]
        lengths.add(len(values))
        ci = bootstrap_ci(np.mean, values, n_resamples=400, seed=11)
        column = by_name[name]
        assert (column["mean"], column["low"], column["high"]) == (ci.estimate, ci.low, ci.high)
    assert len(lengths) == 2  # equal-length columns share a stream, the n/a one has its own
