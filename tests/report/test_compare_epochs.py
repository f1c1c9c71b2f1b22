"""`compare` pairs runs of epochs by example: per-example means over the epochs, then the
paired test on one value per example."""

from pathlib import Path

import jsonschema
import pytest

from aieval import Example, Store, run
from aieval.report import compare_runs, comparison_schema
from aieval.scorers import exact_match

ROWS = [{"id": f"q{i}", "prompt": f"p{i}", "expected": f"p{i}"} for i in range(8)]


def answers_right(times: dict[str, int]):  # type: ignore[no-untyped-def]
    """A target that answers example ``id`` right in its first ``times[id]`` epochs."""

    def target(example: Example) -> str:
        right = (example.epoch or 1) <= times[example.id]
        return example.prompt if right else "wrong"

    return target


def test_runs_of_epochs_pair_by_example_with_their_mean_over_epochs(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    base_times = {f"q{i}": i % 4 for i in range(8)}  # 0..3 of 3 epochs right
    cand_times = {f"q{i}": 3 for i in range(8)}  # always right
    common = dict(dataset=ROWS, scorers=[exact_match], store=store, epochs=3)
    base = run(name="b", target=answers_right(base_times), **common)
    cand = run(name="c", target=answers_right(cand_times), **common)
    comparison = compare_runs(store, base.id, cand.id)
    assert comparison.paired == 8 and comparison.only_baseline_count == 0
    assert comparison.baseline["epochs"] == comparison.candidate["epochs"] == 3
    metrics = {m["name"]: m for m in comparison.metrics}
    shares = [min(t, 3) / 3 for t in base_times.values()]
    assert metrics["pass_rate"]["n"] == 8
    assert metrics["pass_rate"]["baseline"] == pytest.approx(sum(shares) / 8)
    assert metrics["pass_rate"]["candidate"] == pytest.approx(1.0)
    assert metrics["exact_match"]["baseline"] == pytest.approx(base.metrics["exact_match"])
    rule = next(r for r in comparison.decision.rules if r.rule == "pass_rate_not_worse")
    assert rule.details["baseline"] == pytest.approx(sum(shares) / 8)
    # an improved example reports its pass share on each side
    improved = {e["id"]: e for e in comparison.improvements}
    assert improved["q1"]["baseline"]["pass_share"] == pytest.approx(1 / 3)
    assert improved["q1"]["candidate"]["pass_share"] == pytest.approx(1.0)
    jsonschema.validate(comparison.to_dict(), comparison_schema())


def test_a_run_of_epochs_pairs_with_a_run_without(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    times = {f"q{i}": 3 for i in range(8)}
    base = run(name="b", dataset=ROWS, scorers=[exact_match], target=answers_right(times),
               store=store)  # fmt: skip
    cand = run(name="c", dataset=ROWS, scorers=[exact_match], target=answers_right(times),
               store=store, epochs=2, min_pass_rate=1.0)  # fmt: skip
    comparison = compare_runs(store, base.id, cand.id)
    assert "epochs" not in comparison.baseline and comparison.candidate["epochs"] == 2
    assert comparison.candidate["minimums"]["met"] is True
    jsonschema.validate(comparison.to_dict(), comparison_schema())
    assert comparison.paired == 8 and comparison.only_candidate_count == 0
    assert comparison.regressions_count == 0 and comparison.improvements_count == 0
