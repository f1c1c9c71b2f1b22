"""A deterministic fixture store whose reports and comparisons are kept as golden JSON.

Run as a script to (re)write the golden files from the current code::

    python -m tests.report.golden.fixture

Only regenerate when a number is meant to change: the golden files pin ``build_report`` and
``compare_runs`` to the last digit, whatever reads the samples back.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

from aieval._records import CallRecord, SampleRecord, ScoreRecord
from aieval.core import CriterionValue, GateOutcome, Reason, Verdict
from aieval.core._threshold import threshold_verdict
from aieval.report import build_report, compare_runs
from aieval.store import Store

HERE = Path(__file__).parent
#: Samples per run (every run pairs with its partner over most of them).
N = 800
#: ``(baseline, candidate)`` run ids of each pair of runs.
PAIRS = {
    "ungraded": ("ungraded-base", "ungraded-cand"),
    "graded": ("graded-base", "graded-cand"),
    "epochs": ("epochs-base", "epochs-cand"),
}
_WORDS = ["alpha", "beta", "gamma", "delta", "omega"]


def build_store(location: str | Path) -> Store:
    """A store at ``location`` holding every run of :data:`PAIRS`, timestamps fixed."""
    store = Store(location)
    for kind, (base, cand) in PAIRS.items():
        for seed, run_id in enumerate((base, cand)):
            _store_run(store, kind, run_id, seed)
    return store


def documents(store: Store) -> dict[str, Any]:
    """Every report and comparison of the fixture store, as JSON-ready data."""
    out: dict[str, Any] = {}
    for kind, (base, cand) in PAIRS.items():
        for run_id in (base, cand):
            slices = ["topic", "nested.level"] if kind != "epochs" else ["topic"]
            out[f"report:{run_id}"] = build_report(store, run_id, slice_by=slices).to_dict()
        out[f"compare:{kind}"] = compare_runs(store, base, cand, max_examples=40).to_dict()
    return out


def _store_run(store: Store, kind: str, run_id: str, seed: int) -> None:
    rng = random.Random(f"{kind}-{seed}")
    config: dict[str, Any] = {"pass_threshold": 0.6 if kind == "ungraded" else 0.5}
    if kind == "graded":
        config["workflow"] = {"id": "support", "version": "2", "profile": "default"}
    if kind == "epochs":
        config["epochs"] = 2
    store.create_run(
        name=f"{kind}-{'cand' if seed else 'base'}",
        model=f"model-{seed}",
        provider="recorded",
        dataset="fixture.jsonl",
        dataset_hash="abc123",
        n_examples=N + 10,
        config=config,
        run_id=run_id,
    )
    samples = []
    for i in range(N):
        # each side lacks a few examples the other has
        if (seed == 0 and i % 97 == 5) or (seed == 1 and i % 89 == 7):
            continue
        if kind == "epochs":
            samples += [_sample(rng, kind, i, seed, epoch) for epoch in (1, 2)]
        else:
            samples.append(_sample(rng, kind, i, seed, None))
    for start in range(0, len(samples), 250):
        store.record_samples(run_id, samples[start : start + 250])
    metrics = {"samples": len(samples)}
    store.finish_run(run_id, status="completed", metrics=metrics)
    when = 1_700_000_000.0 + 1000 * seed + (0 if kind == "ungraded" else 10_000)
    store._write(
        "UPDATE runs SET created_at = ?, started_at = ?, finished_at = ?, heartbeat_at = ?,"
        " pid = NULL, host = NULL WHERE id = ?",
        (when, when + 1, when + 61.5, when + 61.5, run_id),
    )


def _sample(rng: random.Random, kind: str, i: int, seed: int, epoch: int | None) -> SampleRecord:
    expected = " ".join(_WORDS[: 2 + i % 4])
    changed = seed == 1 and i % 151 == 3  # the candidate saw a changed input
    sample = SampleRecord(
        id=f"ex{i}" if epoch is None else f"ex{i}#{epoch}",
        index=i,
        input={"prompt": f"question {i}" + (" (edited)" if changed else ""), "n": i},
        expected=expected if not (seed == 1 and i % 211 == 9) else expected + "!",
        prediction=" ".join(w for w in expected.split() if rng.random() < 0.8),
        metadata={"topic": f"t{i % 7}", "nested": {"level": i % 3}} if i % 13 else {},
        latency_s=None if i % 17 == 0 else round(rng.uniform(0.05, 3.0), 6),
        input_tokens=None if i % 19 == 0 else rng.randint(5, 500),
        output_tokens=None if i % 19 == 0 else rng.randint(1, 300),
        cost=None if i % 23 == 0 else rng.uniform(0, 0.01),
        retries=rng.choice([0, 0, 0, 1, 2]),
        cached=rng.random() < 0.1,
        epoch=epoch,
    )
    if i % 41 == 11:
        sample.error = "TimeoutError: the target took too long"
    sample.calls = _calls(rng, sample)
    if kind == "graded":
        sample.scores = _scores(rng, sample, i, judged=True)
        sample.verdict = _workflow_verdict(rng, sample, i)
    else:
        sample.scores = _scores(rng, sample, i, judged=kind == "ungraded")
        threshold = 0.6 if kind == "ungraded" else 0.5
        sample.verdict = threshold_verdict(sample, threshold, weights={"judge": 2.0})
        sample.passed = sample.verdict.passed
    return sample


def _calls(rng: random.Random, sample: SampleRecord) -> list[CallRecord]:
    calls = [
        CallRecord(
            purpose="target",
            provider="recorded",
            model="m",
            latency_s=sample.latency_s,
            input_tokens=sample.input_tokens,
            output_tokens=sample.output_tokens,
            cost=sample.cost,
            retries=sample.retries,
            cached=sample.cached,
            error=sample.error,
        )
    ]
    if rng.random() < 0.5:
        calls.append(
            CallRecord(
                purpose="judge:judge",
                provider="recorded",
                model="j",
                latency_s=rng.uniform(0.1, 1),
                input_tokens=rng.randint(50, 900),
                output_tokens=rng.randint(1, 20),
                cost=rng.uniform(0, 0.002),
                cached=rng.random() < 0.3,
            )
        )
    return calls


def _scores(
    rng: random.Random, sample: SampleRecord, i: int, judged: bool
) -> dict[str, ScoreRecord]:
    if sample.error is not None and i % 2:
        return {}  # the target failed: no scorer ran
    if i % 53 == 17:
        return {}  # nothing scored
    words = set(sample.prediction.split())
    truth = set(str(sample.expected).split())
    f1 = 2 * len(words & truth) / (len(words) + len(truth)) if words or truth else 1.0
    scores = {
        "exact": ScoreRecord(float(sample.prediction == sample.expected)),
        "f1": ScoreRecord(f1, raw={"overlap": len(words & truth)}, reason="token overlap"),
    }
    if i % 31 == 4:
        scores["f1"] = ScoreRecord(None, error="ValueError: empty prediction")
    if i % 29 == 6:
        scores["exact"] = ScoreRecord(None)  # not applicable
    if judged:
        failures = 1 if rng.random() < 0.15 else 0
        value = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0])
        meta: dict[str, Any] = {"parse_failures": failures, "verdicts": 2, "model": "j"}
        if i % 3 == 0:
            meta.update(
                inconsistent=rng.random() < 0.2,
                outcome=rng.choice(["win", "loss", "tie"]),
                adjudicated=rng.random() < 0.5,
            )
        unreadable = "no score in the reply" if failures and rng.random() < 0.3 else None
        scores["judge"] = ScoreRecord(
            0.0 if unreadable else value,
            raw={"reply": f"score {value}"},
            reason="the judge's view",
            metadata=meta,
            unreadable=unreadable,
        )
    if i % 9 == 2:
        scores[f"row:contains-{i % 2}"] = ScoreRecord(float(rng.random() < 0.7))
    return scores


def _workflow_verdict(rng: random.Random, sample: SampleRecord, i: int) -> Verdict:
    gates = (
        GateOutcome("schema_valid", rng.random() < 0.93, None),
        GateOutcome("safety_filter", rng.random() < 0.97, "flagged words"),
    )
    if i % 5 == 0:
        gates = gates[:1]
    criteria = {
        "correctness": CriterionValue(
            rng.random(),
            adjusted=rng.random() if i % 4 == 0 else None,
            weight=2.0,
            kind="objective",
        ),
        "tone": CriterionValue(
            rng.random(), weight=1.0, floor=0.2, floor_passed=None, kind="judge"
        ),
        "safety_policy": CriterionValue(
            v := rng.random(), weight=0.5, floor=0.1, floor_passed=v >= 0.1, kind="judge"
        ),
    }
    if i % 37 == 1:
        criteria.pop("tone")
    total = sum(c.weight for c in criteria.values())
    weighted = 100.0 * sum(c.weight * c.normalized for c in criteria.values()) / total
    if sample.error is not None:
        weighted = 0.0
    gates_ok = all(g.passed for g in gates)
    floors_ok = all(c.floor_passed is not False for c in criteria.values())
    passed = gates_ok and floors_ok and weighted >= 50.0 and sample.error is None
    grade = "A" if weighted >= 85 else "B" if weighted >= 70 else "C" if weighted >= 55 else "D"
    if not gates_ok:
        grade = "F"
    reasons: tuple[Reason, ...] = ()
    if not passed:
        reasons = tuple(Reason("gate", g.name, g.reason or "failed") for g in gates if not g.passed)
        if weighted < 50:
            reasons += (Reason("threshold", "weighted_score", "weighted score below 50.0"),)
        if sample.error is not None:
            reasons += (Reason("error", "target", sample.error),)
    workflow: dict[str, Any] = {"workflow": "support" if i % 6 else "escalation"}
    if i % 8 == 0:
        workflow["missing_criteria"] = [{"name": "citations", "reason": "no judge reply"}]
    if i % 4 == 1:
        workflow["agents"] = {
            "planner": {"steps": rng.randint(1, 5), "passed": rng.random() < 0.8},
            "writer": {"steps": rng.randint(1, 3), "passed": rng.random() < 0.9},
        }
    return Verdict(
        passed=passed,
        reasons=reasons,
        weighted_score=weighted,
        grade=grade,
        gates=gates,
        criteria=criteria,
        grader="workflow",
        workflow=workflow,
    )


def golden_path() -> Path:
    """Where the golden documents are kept."""
    return HERE / "reports.json"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = build_store(Path(tmp) / "fixture.db")
        data = documents(store)
        store.close()
    text = json.dumps(data, indent=1, sort_keys=True, allow_nan=False)
    golden_path().write_text(text + "\n", encoding="utf-8")
    print(f"wrote {len(data)} documents to {golden_path()}")


if __name__ == "__main__":
    main()
