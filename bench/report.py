"""Report benchmarks: build_report and compare_runs on stored runs, and the bootstrap against peers.

Usage::

    python bench/report.py                       # 10,000 and 100,000 samples
    python bench/report.py --sizes 10000 --resamples 2000 --loop-resamples 100

For each size, two runs (baseline and candidate) of recorded predictions are stored in a temp
SQLite file with ``aieval.run``; then ``build_report`` and ``compare_runs`` are timed, with the
time spent only reading the samples back shown apart. The bootstrap part times, on the same
per-example weighted scores, aieval's vectorised percentile bootstrap (one sample and paired),
``scipy.stats.bootstrap(..., method="percentile", vectorized=True)``, and two loop bootstraps
(pure Python, and a Python loop of numpy resamples). The pure-Python loop is timed on
``--loop-resamples`` resamples and scaled to ``--resamples`` (its cost is linear in them).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def make_rows(n: int, seed: int, skill: float) -> list[dict[str, Any]]:
    """Rows with recorded predictions: a ``skill`` share right, the rest partly right."""
    rng = random.Random(seed)
    words = [
        "the",
        "refund",
        "window",
        "is",
        "thirty",
        "days",
        "from",
        "delivery",
        "for",
        "unused",
        "items",
    ]
    rows = []
    for i in range(n):
        expected = " ".join(words)
        if rng.random() < skill:
            prediction = expected
        else:
            prediction = " ".join(w for w in words if rng.random() < 0.7)
        rows.append(
            {
                "id": f"ex{i}",
                "prompt": f"question {i}",
                "expected": expected,
                "prediction": prediction,
                "metadata": {"topic": f"t{i % 7}"},
            }
        )
    return rows


def timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - started)
    return best, value


def reports(n: int, store_dir: Path, resamples: int) -> dict[str, float]:
    """Store a baseline and a candidate run of ``n`` samples; time report and comparison."""
    from aieval import Store, run
    from aieval.report import build_report, compare_runs
    from aieval.scorers import exact_match, token_f1

    store = Store(store_dir / f"runs-{n}.db")
    made = {}
    for name, skill, seed in (("baseline", 0.70, 1), ("candidate", 0.72, 2)):
        seconds, result = timed(
            lambda s=skill, sd=seed, nm=name: run(  # type: ignore[misc]
                name=nm,
                dataset=make_rows(n, sd, s),
                scorers=[exact_match, token_f1],
                store=store,
            )
        )
        made[name] = result.id
        print(f"  stored {name} run of {n} samples in {seconds:.1f} s")
    read_s, _ = timed(lambda: list(store.iter_samples(made["candidate"])))
    report_s, report = timed(
        lambda: build_report(store, made["candidate"], slice_by=["topic"], n_resamples=resamples)
    )
    compare_s, comparison = timed(
        lambda: compare_runs(store, made["baseline"], made["candidate"], n_resamples=resamples)
    )
    per_1k = 1000 / n
    print(f"  read {n} samples back:         {read_s:7.2f} s")
    print(
        f"  build_report (slice by topic): {report_s:7.2f} s"
        f"  ({report_s * per_1k * 1000:.1f} ms per 1k samples; reading is "
        f"{read_s / report_s:.0%} of it)"
    )
    print(
        f"  compare_runs:                  {compare_s:7.2f} s"
        f"  ({compare_s * per_1k * 1000:.1f} ms per 1k samples; reading both runs is "
        f"{2 * read_s / compare_s:.0%} of it)"
    )
    ws = report.to_dict()["weighted_score"]
    print(
        f"  weighted score {ws['mean']:.2f} [{ws['low']:.2f}, {ws['high']:.2f}];"
        f" promote: {comparison.to_dict()['decision']['promote']}"
    )
    store.close()
    return {"read": read_s, "build_report": report_s, "compare_runs": compare_s}


def bootstraps(n: int, resamples: int, loop_resamples: int) -> dict[str, float]:
    """One-sample and paired percentile bootstrap of the mean on ``n`` values, four ways."""
    from scipy import stats as sps

    from aieval.stats import bootstrap_ci, paired_bootstrap_ci

    rng = np.random.default_rng(0)
    base = np.clip(rng.normal(70, 20, n), 0, 100)
    cand = np.clip(base + rng.normal(1, 5, n), 0, 100)
    out: dict[str, float] = {}

    ours_s, ours = timed(lambda: bootstrap_ci(np.mean, base, n_resamples=resamples), repeat=3)
    scipy_s, theirs = timed(
        lambda: sps.bootstrap(
            (base,),
            np.mean,
            n_resamples=resamples,
            method="percentile",
            vectorized=True,
            random_state=0,
        ),
        repeat=3,
    )
    loop_np_s, loop_np = timed(lambda: _numpy_loop(base, resamples))
    few_s, _ = timed(lambda: _python_loop(base.tolist(), loop_resamples))
    loop_py_s = few_s * resamples / loop_resamples
    out.update(ours=ours_s, scipy=scipy_s, numpy_loop=loop_np_s, python_loop=loop_py_s)
    print(f"  one sample, mean, {resamples} resamples of {n} values:")
    _line("aieval bootstrap_ci (vectorised)", ours_s, ours_s, (ours.low, ours.high))
    ci = theirs.confidence_interval
    _line("scipy.stats.bootstrap, vectorized", scipy_s, ours_s, (ci.low, ci.high))
    _line("Python loop of numpy resamples", loop_np_s, ours_s, loop_np)
    _line(
        f"pure Python loop (x{resamples // loop_resamples} of {loop_resamples})",
        loop_py_s,
        ours_s,
        None,
    )

    paired_s, paired = timed(
        lambda: paired_bootstrap_ci(base, cand, n_resamples=resamples), repeat=3
    )
    scipy_paired_s, theirs_paired = timed(
        lambda: sps.bootstrap(
            (base, cand),
            _mean_delta,
            n_resamples=resamples,
            method="percentile",
            vectorized=True,
            paired=True,
            random_state=0,
        ),
        repeat=3,
    )
    out.update(paired_ours=paired_s, paired_scipy=scipy_paired_s)
    print(f"  paired, mean of candidate - baseline, {resamples} resamples of {n} pairs:")
    _line("aieval paired_bootstrap_ci", paired_s, paired_s, (paired.low, paired.high))
    ci = theirs_paired.confidence_interval
    _line("scipy.stats.bootstrap, paired", scipy_paired_s, paired_s, (ci.low, ci.high))
    return out


def _scipy_import() -> float:
    code = "import time; t = time.perf_counter(); import scipy.stats; print(time.perf_counter()-t)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout)


def _mean_delta(b: np.ndarray, c: np.ndarray, axis: int = -1) -> Any:
    return np.mean(c, axis=axis) - np.mean(b, axis=axis)


def _numpy_loop(values: np.ndarray, resamples: int) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    means = [values[rng.integers(0, values.size, values.size)].mean() for _ in range(resamples)]
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def _python_loop(values: list[float], resamples: int) -> tuple[float, float]:
    rng = random.Random(0)
    n = len(values)
    means = sorted(statistics.fmean(rng.choices(values, k=n)) for _ in range(resamples))
    return means[int(0.025 * (resamples - 1))], means[int(0.975 * (resamples - 1))]


def _line(label: str, seconds: float, ours: float, ci: tuple[float, float] | None) -> None:
    interval = "" if ci is None else f"  CI [{ci[0]:.3f}, {ci[1]:.3f}]"
    print(f"    {label:44s} {seconds:8.3f} s  {seconds / ours:7.1f}x aieval's time{interval}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--loop-resamples", type=int, default=100)
    parser.add_argument("--part", choices=["reports", "bootstrap", "all"], default="all")
    args = parser.parse_args()
    import scipy

    print(
        f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; "
        f"numpy {np.__version__}; scipy {scipy.__version__}"
    )
    print(f"one-off: importing scipy.stats in a fresh process takes {_scipy_import():.2f} s")
    # paid once here, so the timings below are steady state
    import scipy.stats

    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            if args.part in ("reports", "all"):
                print(f"reports on stored runs of {n} samples ({args.resamples} resamples):")
                reports(n, Path(tmp), args.resamples)
            if args.part in ("bootstrap", "all"):
                print(f"bootstrap on {n} values:")
                bootstraps(n, args.resamples, args.loop_resamples)


if __name__ == "__main__":
    main()
