"""Report benchmarks: build_report and compare_runs on stored runs, and the bootstrap against peers.

Usage::

    python bench/report.py                       # 10,000 and 100,000 samples, SQLite
    python bench/report.py --sizes 10000 --resamples 2000 --loop-resamples 100
    python bench/report.py --part reports --sizes 100000 1000000 --backends sqlite postgres
    python bench/report.py --part columns --sizes 100000 1000000   # a report's 3 bootstraps
    python bench/report.py --part sums --sizes 100000 1000000 --backends sqlite postgres

For each size, two runs (baseline and candidate) of recorded predictions are stored in a temp
SQLite file with ``aieval.run`` (and copied to a temporary PostgreSQL server, started from the
Debian server binaries, for ``--backends postgres``); then ``build_report`` and ``compare_runs``
are timed, each in a fresh process so that its peak memory (VmHWM) is its own, with the time
spent only reading the samples back shown apart: ``read`` one record per sample
(``iter_samples``, as reports of graded runs and the record path of comparisons call it),
``read_columns`` as columns (as reports of runs of plain verdicts read them). For
``compare_runs`` the time spent in its bootstraps (the paired bootstrap of each metric and the
non-inferiority tests) is shown too: the rest is reading, pairing and the rules. With
``--before REV`` (default: the commit before the read path was reworked), each step is also
run by the code of git revision ``REV`` (exported to a temporary folder) on the same stores,
alternating with the current code, and the ratio printed: on a shared machine only figures
taken side by side compare, and CPU time (also shown) is steadier than wall time.

The bootstrap part times, on the same per-example weighted scores, aieval's vectorised
percentile bootstrap (one sample and paired),
``scipy.stats.bootstrap(..., method="percentile", vectorized=True)``, and two loop bootstraps
(pure Python, and a Python loop of numpy resamples). The pure-Python loop is timed on
``--loop-resamples`` resamples and scaled to ``--resamples`` (its cost is linear in them).

The sums part generates two plain runs of each size in the database itself (``INSERT ...
SELECT`` over a row number, both backends) and times, each in a fresh process with its peak
memory, ``Store.run_sums`` (with a slice) and ``Store.pair_sums``, beside the reads the report
and comparison of plain runs make today on the same runs (``sample_columns``, and
``pair_samples`` with ``pair_scores`` of both runs): the old path's query part, as a ratio;
and ``build_report`` end to end (closed-form intervals) from the sums, against the column path
it replaces (``report_columns``): ``report_heal`` the first report of a run without rollups
(scanned, then kept), ``report_first_slice`` a report of a run whose rollups were built when it
ended but not yet sliced by ``topic``, ``report_sums`` the next one (the slice kept).
``write_rollups`` / ``write_plain`` write 20,480 samples in batches of 512 and end the run,
with and without its rollups (built at the run's end since schema 11; ``bench/rollup_cost.py``
sets that against the deltas each batch added before).

The columns part times the bootstrap of three equal-length columns (a report's weighted score
and two scorers): one stream of indices per column, as before, against ``resample_means_many``
(one shared stream, gathered on threads) serial and threaded, and drawing the indices alone,
the sequential floor; it checks the results equal to the last digit.
"""

from __future__ import annotations

import argparse
import contextlib
import json
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


#: What ``--steps`` can time, each in a fresh process.
STEPS = ("read", "read_columns", "build_report", "compare_runs")

#: The commit before the read path of reports and comparisons was reworked.
BEFORE_REV = "fe94339"

_CHILD = """
import json, sys, time
from aieval import Store
from aieval.report import build_report, compare_runs
import scipy.stats  # imported lazily by the statistics: paid before timing
what, location, base, cand, resamples = sys.argv[1:6]
# the bootstraps' share: time spent in the paired bootstrap and the non-inferiority tests
spent = [0.0]
def _timed(fn):
    def timed(*args, **kwargs):
        began = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - began
    return timed
for module in list(sys.modules.values()):
    if getattr(module, "__name__", "").startswith("aieval."):
        for name in ("paired_bootstrap_ci", "noninferiority_test"):
            if callable(getattr(module, name, None)):
                setattr(module, name, _timed(getattr(module, name)))
store = Store(location)
store.get_run(cand)
import aieval.report._compare as compare_module
if what in ("compare", "compare_columns"):  # not from the columns the runs kept
    compare_module.kept_parts = lambda *args, **kwargs: None
if what in ("compare_columns", "compare_kept"):  # not from the sums in the database
    compare_module.sums_parts = lambda *args, **kwargs: None
if what == "compare_kept":  # from the columns the runs kept (checked to be taken)
    kept_parts = compare_module.kept_parts
    def taken(*args, **kwargs):
        parts = kept_parts(*args, **kwargs)
        assert parts is not None, "the runs kept no columns"
        return parts
    compare_module.kept_parts = taken
started, cpu = time.perf_counter(), time.process_time()
if what == "read":
    try:
        samples = store.iter_samples(cand, texts=False)
    except TypeError:  # the code before iter_samples(texts=...)
        samples = store.iter_samples(cand)
    for _ in samples:
        pass
elif what in ("report_sums", "report_columns", "report_heal", "report_first_slice"):
    # build_report end to end, closed-form intervals both ways: from the sums, or (the old
    # path) from the columns read back
    if what == "report_columns":
        bundle.sums_report = lambda *args: None
    data = bundle.build_report(store, cand, slice_by=["topic"]).to_dict()
    assert data["weighted_score"]["method"] != "percentile bootstrap"
elif what == "read_columns":
    columns = store.sample_columns(cand, metadata=True)
    if hasattr(store, "judged_scores"):  # the scores are read with the samples
        store.judged_scores(cand)
        store.failed_samples(cand, lambda page: None)
        store.sample_extras(cand, lambda page: None)
    else:  # the code before: scores in a query of their own
        store.score_columns(cand, {i: p for p, i in enumerate(columns.ids)})
    store.call_totals(cand)
elif what == "build_report":
    build_report(store, cand, slice_by=["topic"], n_resamples=int(resamples))
else:
    compare_runs(store, base, cand, n_resamples=int(resamples))
seconds = time.perf_counter() - started
cpu = time.process_time() - cpu
server_seconds = server_cpu() - server_started
peak = 0.0
with open("/proc/self/status") as status:
    for line in status:
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_mb": peak, "bootstraps": spent[0]}))
"""


def store_runs(n: int, store_dir: Path) -> tuple[str, dict[str, str]]:
    """An SQLite store with a baseline and a candidate run of ``n`` samples; their ids."""
    from aieval import Store, run
    from aieval.scorers import exact_match, token_f1

    location = str(store_dir / f"runs-{n}.db")
    if Path(location).exists():  # kept by --store-dir: the runs stored by an earlier call
        with Store(location) as kept:
            made = {name: kept.get_run(name).id for name in ("baseline", "candidate")}
        print(f"  reusing the runs of {n} samples in {location}")
        return location, made
    store = Store(location)
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
    store.close()
    return location, made


def copy_runs(source: str, target: str, ids: dict[str, str]) -> None:
    """Copy the runs ``ids`` from the store at ``source`` to the one at ``target``."""
    from aieval import Store

    with Store(source) as src, Store(target) as dst:
        for run_id in ids.values():
            started = time.perf_counter()
            dst.import_run(src.get_run(run_id), src.stored_samples(run_id))
            print(f"  copied run {run_id} to PostgreSQL in {time.perf_counter() - started:.1f} s")


def measure(
    what: str, location: str, ids: dict[str, str], resamples: int, src: Path | None = None
) -> dict[str, float]:
    """Seconds and peak MB of ``what`` (read, build_report, compare_runs) in a fresh process,
    by the code in ``src`` (a ``src`` folder of another revision) or the installed one."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHILD,
            what,
            location,
            ids["baseline"],
            ids["candidate"],
            str(resamples),
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def export_source(rev: str, into: Path) -> Path:
    """The ``src`` folder of git revision ``rev``, exported under ``into``."""
    repo = Path(__file__).resolve().parents[1]
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", rev, "src"], capture_output=True, check=True
    )
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def reports(
    n: int,
    backend: str,
    location: str,
    ids: dict[str, str],
    resamples: int,
    before: Path | None,
    steps: tuple[str, ...] = STEPS,
) -> dict[str, float]:
    """Time reading back, ``build_report`` and ``compare_runs`` of the stored runs (and, with
    ``before``, the same by that code, side by side)."""
    out: dict[str, float] = {}
    for what in steps:
        # the columns are new: the code before has no such read
        old = (
            measure(what, location, ids, resamples, before)
            if before and what != "read_columns"
            else None
        )
        figures = measure(what, location, ids, resamples)
        out[what] = figures["seconds"]
        print(
            f"  {backend:8s} {what:13s} {figures['seconds']:7.2f} s (CPU {figures['cpu']:6.2f} s)"
            f"  peak {figures['peak_mb']:6.0f} MB"
            f"  ({figures['seconds'] * 1e6 / n:5.1f} us per sample)"
            + (f"; bootstraps {figures['bootstraps']:.2f} s" if figures["bootstraps"] else "")
        )
        if old is not None:
            print(
                f"  {'':8s} {'  before':13s} {old['seconds']:7.2f} s (CPU {old['cpu']:6.2f} s)"
                f"  peak {old['peak_mb']:6.0f} MB"
                f"  -> now {old['seconds'] / figures['seconds']:.2f}x faster"
                f" ({old['cpu'] / figures['cpu']:.2f}x in CPU time),"
                f" {figures['peak_mb'] / old['peak_mb']:.2f}x the memory"
            )
    return out


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


def columns(n: int, resamples: int, k: int = 3) -> None:
    """The bootstrap of a report's ``k`` equal-length columns: one shared stream vs one each.

    ``per column`` is the block loop the bootstrap ran before the shared stream (draw, gather,
    mean, one column at a time); ``draw only`` is the sequential floor (the index blocks alone);
    the results are checked equal to the last digit.
    """
    from aieval.stats import resample_means_many
    from aieval.stats._resample import BLOCK_ENTRIES

    rng = np.random.default_rng(0)
    data = [np.clip(rng.normal(70 - 10 * j, 20, n), 0, 100) for j in range(k)]
    block = max(1, BLOCK_ENTRIES // n)

    def draw_only() -> None:
        g = np.random.default_rng(0)
        for start in range(0, resamples, block):
            g.integers(0, n, size=(min(block, resamples - start), n))

    def per_column() -> list[np.ndarray]:
        out = []
        for values in data:
            g = np.random.default_rng(0)
            means = np.empty(resamples)
            for start in range(0, resamples, block):
                rows = min(block, resamples - start)
                means[start : start + rows] = values[g.integers(0, n, size=(rows, n))].mean(axis=1)
            out.append(means)
        return out

    repeat = 1 if n > 200_000 else 3
    floor_s, _ = timed(draw_only, repeat=repeat)
    old_s, old = timed(per_column)
    serial_s, serial = timed(lambda: resample_means_many(data, n_resamples=resamples, workers=0))
    many_s, many = timed(lambda: resample_means_many(data, n_resamples=resamples), repeat=repeat)
    same = all(
        np.array_equal(a, b) and np.array_equal(a, c)
        for a, b, c in zip(old, serial, many, strict=True)
    )
    print(f"  {k} columns of {n} values, {resamples} resamples (load {_load()}):")
    _line("per column, one stream each (before)", old_s, many_s, None)
    _line("resample_means_many, no thread", serial_s, many_s, None)
    _line(f"resample_means_many, {os.cpu_count()} gathering threads", many_s, many_s, None)
    _line("drawing the indices alone (the floor)", floor_s, many_s, None)
    print(f"    equal to the last digit: {same}")
    if not same:
        raise SystemExit("resample_means_many differs from the per-column loop")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


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


#: What ``--part sums`` times, each in a fresh process: the sums in SQL, and the reads the
#: report and comparison of plain runs make today (the old path's query part) on the same runs.
SUMS_STEPS = (
    "report_heal",
    "report_first_slice",
    "report_sums",
    "report_columns",
    "write_rollups",
    "write_plain",
    "run_sums",
    "pair_sums",
    "read_columns",
    "read_pairs",
    "compare",
    "compare_columns",
    "compare_kept",
)

_SUMS_CHILD = """
import json, os, sys, time
from aieval import Store
import aieval.report._bundle as bundle
what, location, base, cand = sys.argv[1:5]
store = Store(location)
store.get_run(cand)
import aieval.report._compare as compare_module
if what in ("compare", "compare_columns"):  # not from the columns the runs kept
    compare_module.kept_parts = lambda *args, **kwargs: None
if what in ("compare_columns", "compare_kept"):  # not from the sums in the database
    compare_module.sums_parts = lambda *args, **kwargs: None
if what == "compare_kept":  # from the columns the runs kept (checked to be taken)
    kept_parts = compare_module.kept_parts
    def taken(*args, **kwargs):
        parts = kept_parts(*args, **kwargs)
        assert parts is not None, "the runs kept no columns"
        return parts
    compare_module.kept_parts = taken
if what == "compare":  # the sums path at any size (by default from SUMS_FROM_PAIRS pairs on)
    import aieval.report._compare_sums as compare_sums
    compare_sums.SUMS_FROM_PAIRS = 0
if what == "report_heal":  # the first report of a run without rollups: scanned, then kept
    store._write("DELETE FROM run_totals WHERE run_id = ?", (cand,))
if what == "report_first_slice":  # rollups built at the run's end, the slice not kept yet
    store._write("DELETE FROM run_slices WHERE run_id = ?", (cand,))
if what == "write_plain":  # the writer without rollups (per batch before, at the end now)
    import aieval.store._sample_writes as writes
    writes.batch_statements = lambda *args: []
    if hasattr(Store, "keep_rollups"):
        Store.keep_rollups = lambda self, run_id: None
if what.startswith("write_"):
    from aieval._records import SampleRecord, ScoreRecord
    from aieval.core import Verdict
    written = store.create_run(name=what)
    batches = [
        [
            SampleRecord(id=f"w{i}", index=i, input={"q": i}, expected="a", prediction="a",
                         scores={"exact": ScoreRecord(value=float(i % 2)),
                                 "f1": ScoreRecord(value=(i % 997) / 997)},
                         passed=i % 2 == 0, latency_s=0.01 * (i % 89),
                         verdict=Verdict(passed=i % 2 == 0, weighted_score=50.0 * (i % 3)))
            for i in range(start, start + 512)
        ]
        for start in range(0, 20480, 512)
    ]
if what.startswith("compare"):  # steady state: the closed forms' scipy modules imported once
    import scipy.optimize, scipy.special, scipy.stats
server = os.environ.get("BENCH_POSTMASTER")
def server_cpu():
    # the PostgreSQL server's CPU seconds: the postmaster's (with its reaped children's) and
    # its live children's (the backend and any parallel workers)
    if not server:
        return 0.0
    total = 0
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if pid == server:
            total += sum(int(v) for v in fields[11:15])
        elif fields[1] == server:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")
traced = bool(os.environ.get("BENCH_TRACEMALLOC"))
if traced:  # Python's own view of the step's peak (slower: its time is not reported)
    import tracemalloc
    tracemalloc.start()
server_started = server_cpu()
started, cpu = time.perf_counter(), time.process_time()
if what.startswith("write_"):  # 20,480 samples in batches of 512, as the runner commits them
    for batch in batches:
        store.record_samples(written, batch)
    store.finish_run(written, status="completed")  # its rollups built here, or by the batches
elif what == "run_sums":
    assert store.run_sums(cand, ("topic",)) is not None
elif what == "pair_sums":
    assert store.pair_sums(base, cand, example_delta=5.0, limit=200) is not None
elif what in ("report_sums", "report_columns", "report_heal", "report_first_slice"):
    # build_report end to end, closed-form intervals both ways: from the sums, or (the old
    # path) from the columns read back
    if what == "report_columns":
        bundle.sums_report = lambda *args: None
    data = bundle.build_report(store, cand, slice_by=["topic"]).to_dict()
    assert data["weighted_score"]["method"] != "percentile bootstrap"
elif what.startswith("compare"):
    done = compare_module.compare_runs(store, base, cand)
    methods = {m["method"] for m in done.metrics}
    assert "paired t interval" in methods, methods
elif what == "read_columns":
    store.sample_columns(cand, metadata=True)
    store.call_totals(cand)
else:
    for run in (base, cand):
        samples = store.pair_samples(run)
        store.pair_scores(run, {i: p for p, i in enumerate(samples.ids)})
seconds = time.perf_counter() - started
cpu = time.process_time() - cpu
server_seconds = server_cpu() - server_started
traced_mb = tracemalloc.get_traced_memory()[1] / 2**20 if traced else None
peak = 0.0
with open("/proc/self/status") as status:
    for line in status:
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
print(json.dumps({"seconds": seconds, "cpu": cpu, "server_cpu": server_seconds, "peak_mb": peak,
                  "traced_mb": traced_mb}))
"""

#: A sample's columns as the generator writes them (SAMPLE_COLUMNS and the typed ones).
_GEN_COLUMNS = (
    "run_id, sample_id, idx, input, expected, prediction, metadata, error, passed, latency_s,"
    " input_tokens, output_tokens, cost, retries, cached, extra, created_at, verdict,"
    " weighted_score, verdict_passed, verdict_plain, grade, epoch, verdict_values,"
    " promotion_score"
)


def _generated(n: int, skill: int) -> tuple[str, str]:
    """SELECT lists of ``n`` samples and their two scores (exact 0/1, f1 on [0, 1]) from a
    row number ``i`` (a hash of it stands for chance: the same runs on both backends)."""
    h = f"((i * 2654435761 + {skill}) % 1000003)"
    f1 = f"(CAST({h} AS DOUBLE PRECISION) / 1000003)"
    exact = f"(CASE WHEN {h} % 100 < {skill} THEN 1 ELSE 0 END)"
    score = f"((({exact}) + {f1}) * 50.0)"
    passed = f"(CASE WHEN {score} >= 50 THEN 1 ELSE 0 END)"
    samples = (
        f"?, 's' || i, i, '{{\"q\": \"question\"}}', '\"answer\"', 'prediction',"
        f" '{{\"topic\": \"t' || (i % 7) || '\"}}', NULL, {passed}, 0.05 + {f1} * 2, 20, 5,"
        f" NULL, 0, 0, NULL, 0.0, '{{\"passed\": ' || CASE WHEN {passed} = 1 THEN 'true'"
        f" ELSE 'false' END || ', \"weighted_score\": ' || {score} || '}}', {score}, {passed},"
        f" 1, NULL, NULL, 1, {score}"
    )
    scores = f"?, 's' || i, 'exact', {exact}"
    scores_f1 = f"?, 's' || i, 'f1', {f1}"
    return samples, scores + "\n" + scores_f1


def generate_runs(location: str, n: int) -> dict[str, str]:
    """Two plain runs of ``n`` samples and two scorers each, written by the database itself
    (``INSERT ... SELECT`` over a row number): a store of a million samples in seconds."""
    from aieval import Store

    with Store(location) as store:
        ids = {name: store.create_run(name=name) for name in ("baseline", "candidate")}
        for run_id in ids.values():
            store.finish_run(run_id, status="completed")
        postgres = store.location.backend == "postgres"
    for name, skill in (("baseline", 70), ("candidate", 72)):
        started = time.perf_counter()
        samples, scores = _generated(n, skill)
        statements = [
            (f"INSERT INTO samples ({_GEN_COLUMNS}) SELECT {samples} FROM {{rows}}", ids[name]),
            *(
                (f"INSERT INTO scores (run_id, sample_id, scorer, value) SELECT {s} FROM {{rows}}",
                 ids[name])
                for s in scores.split("\n")
            ),
        ]  # fmt: skip
        if postgres:
            import psycopg

            with psycopg.connect(location, autocommit=True) as conn:
                for sql, run_id in statements:
                    rows = "generate_series(0, %s) AS g(i)"
                    sql = sql.replace("%", "%%").replace("?", "%s").replace("{rows}", rows)
                    conn.execute(sql, (run_id, n - 1))
                # written by SQL, not by the writer: no rollups (the first report keeps them)
                conn.execute("DELETE FROM run_totals")
                conn.execute("ANALYZE")
        else:
            import sqlite3

            with sqlite3.connect(location) as conn:
                for sql, run_id in statements:
                    rows = "(WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq"
                    rows += " WHERE i < ?) SELECT i FROM seq)"
                    conn.execute(sql.replace("{rows}", rows), (run_id, n - 1))
                conn.execute("DELETE FROM run_totals")
                conn.execute("ANALYZE")
        print(f"  generated the {name} run of {n} samples in {time.perf_counter() - started:.1f} s")
    return ids


def _keep_columns(location: str, ids: dict[str, str]) -> None:
    """Keep the generated runs' columns (written in SQL, not by the writer) by a scan."""
    from aieval import Store

    with Store(location) as store:
        for name, run_id in ids.items():
            if store.kept_columns(run_id) is None:
                started, cpu = time.perf_counter(), time.process_time()
                assert store.keep_columns(run_id)
                wall, cpu = time.perf_counter() - started, time.process_time() - cpu
                print(
                    f"  kept the {name} run's columns by a scan in {wall:.1f} s (CPU {cpu:.1f} s)"
                )


def sums(
    n: int,
    backends: list[str],
    servers: contextlib.ExitStack,
    tmp: Path,
    *,
    steps: tuple[str, ...] = SUMS_STEPS,
    before: Path | None = None,
    store_dir: Path | None = None,
    traced: bool = False,
) -> None:
    """Time ``run_sums`` and ``pair_sums`` on two generated runs of ``n`` samples, beside the
    reads the report and the comparison of plain runs make today on the same runs; with
    ``before`` (a source tree), the comparison's steps also by that code, side by side; with
    ``traced``, each step once more under ``tracemalloc`` for its peak as Python traced it."""
    for backend in backends:
        env = dict(os.environ)
        if backend == "sqlite":
            location = str((store_dir or tmp) / f"sums-{n}.db")
            kept = Path(location + ".ids")
            if kept.exists():  # generated by an earlier call with --store-dir
                ids = json.loads(kept.read_text())
            else:
                ids = generate_runs(location, n)
                if store_dir is not None:
                    kept.write_text(json.dumps(ids))
        else:
            location = _postgres(servers)
            ids = generate_runs(location, n)
            pid = (_postgres.server.folder / "data" / "postmaster.pid").read_text().split()[0]  # type: ignore[attr-defined]
            env["BENCH_POSTMASTER"] = pid
        if "compare_kept" in steps:
            _keep_columns(location, ids)
        figures = {}
        trees = [("", None)] + ([("before ", before)] if before is not None else [])
        for label, tree in trees:
            for what in steps:
                if tree is not None and what not in ("compare", "pair_sums"):
                    continue
                env["PYTHONPATH"] = str(tree) if tree is not None else env.get("PYTHONPATH", "")
                done = subprocess.run(
                    [sys.executable, "-c", _SUMS_CHILD, what, location, ids["baseline"],
                     ids["candidate"]],
                    capture_output=True, text=True, check=False, env=env,
                )  # fmt: skip
                if done.returncode:
                    print(f"  {backend:8s} {label}{what} failed: {done.stderr.strip()[-300:]}")
                    continue
                figures[label + what] = f = json.loads(done.stdout.strip().splitlines()[-1])
                server = f" + server {f['server_cpu']:6.2f} s" if backend == "postgres" else ""
                print(
                    f"  {backend:8s} {label + what:20s} {f['seconds']:7.2f} s"
                    f" (CPU {f['cpu']:6.2f} s{server})  peak {f['peak_mb']:6.0f} MB  load {_load()}"
                )
                if traced:
                    done = subprocess.run(
                        [sys.executable, "-c", _SUMS_CHILD, what, location, ids["baseline"],
                         ids["candidate"]],
                        capture_output=True, text=True, check=False,
                        env={**env, "BENCH_TRACEMALLOC": "1"},
                    )  # fmt: skip
                    if not done.returncode:
                        t = json.loads(done.stdout.strip().splitlines()[-1])
                        print(
                            f"  {backend:8s} {label + what:20s} tracemalloc: the step's peak"
                            f" {t['traced_mb']:6.0f} MiB above the process before it"
                        )
        for new, old in (
            ("report_heal", "report_columns"),
            ("write_rollups", "write_plain"),
            ("run_sums", "read_columns"),
            ("pair_sums", "read_pairs"),
            ("report_sums", "report_columns"),
            ("compare", "compare_columns"),
            ("compare_kept", "compare"),
            ("compare_kept", "compare_columns"),
            ("compare", "before compare"),
            ("pair_sums", "before pair_sums"),
        ):
            if new in figures and old in figures:
                a, b = figures[new], figures[old]
                ratio = (b["cpu"] + b.get("server_cpu", 0.0)) / (
                    a["cpu"] + a.get("server_cpu", 0.0)
                )
                print(f"  {backend:8s} CPU of {old} / CPU of {new}: {ratio:.2f}")
        if backend == "sqlite" and store_dir is None:
            Path(location).unlink()


def _line(label: str, seconds: float, ours: float, ci: tuple[float, float] | None) -> None:
    interval = "" if ci is None else f"  CI [{ci[0]:.3f}, {ci[1]:.3f}]"
    print(f"    {label:44s} {seconds:8.3f} s  {seconds / ours:7.1f}x aieval's time{interval}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--loop-resamples", type=int, default=100)
    parser.add_argument(
        "--part", choices=["reports", "bootstrap", "columns", "sums", "all"], default="all"
    )
    parser.add_argument("--backends", nargs="+", choices=["sqlite", "postgres"], default=["sqlite"])
    parser.add_argument(
        "--before",
        default=BEFORE_REV,
        help="git revision to time side by side with the current code ('none': do not)",
    )
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS))
    parser.add_argument(
        "--sums-steps", nargs="+", choices=SUMS_STEPS, default=list(SUMS_STEPS),
        help="the steps of --part sums to time (default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--sums-traced", action="store_true",
        help="--part sums: run each step once more under tracemalloc, for its traced peak",
    )  # fmt: skip
    parser.add_argument(
        "--store-dir",
        type=Path,
        help="keep the stored runs in this folder and reuse them on the next call",
    )
    args = parser.parse_args()
    import scipy

    print(
        f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; "
        f"numpy {np.__version__}; scipy {scipy.__version__}"
    )
    print(f"one-off: importing scipy.stats in a fresh process takes {_scipy_import():.2f} s")
    # paid once here, so the timings below are steady state
    import scipy.stats

    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as servers:
        for n in args.sizes:
            if args.part in ("reports", "all"):
                print(f"reports on stored runs of {n} samples ({args.resamples} resamples):")
                location, ids = store_runs(n, args.store_dir or Path(tmp))
                before = (
                    None
                    if args.before == "none"
                    else export_source(args.before, Path(tmp) / "before")
                )
                steps = tuple(args.steps)
                figures = {
                    "sqlite": reports(n, "sqlite", location, ids, args.resamples, before, steps)
                }
                if "postgres" in args.backends:
                    url = _postgres(servers)
                    copy_runs(location, url, ids)
                    figures["postgres"] = reports(
                        n, "postgres", url, ids, args.resamples, before, steps
                    )
                    for what, seconds in figures["postgres"].items():
                        print(
                            f"  postgres / sqlite, {what}: "
                            f"{seconds / figures['sqlite'][what]:.2f}x the time"
                        )
                if args.store_dir is None:
                    Path(location).unlink()
            if args.part in ("bootstrap", "all"):
                print(f"bootstrap on {n} values:")
                bootstraps(n, args.resamples, args.loop_resamples)
            if args.part in ("columns", "all"):
                columns(n, args.resamples)
            if args.part in ("sums", "all"):
                print(f"sums in SQL on generated runs of {n} samples (load {_load()}):")
                before = (
                    None
                    if args.before in ("none", BEFORE_REV)
                    else export_source(args.before, Path(tmp) / "before-sums")
                )
                sums(
                    n, args.backends, servers, Path(tmp), steps=tuple(args.sums_steps),
                    before=before, store_dir=args.store_dir, traced=args.sums_traced,
                )  # fmt: skip


def _postgres(servers: contextlib.ExitStack) -> str:
    """A fresh database on a temporary PostgreSQL server (started once per benchmark)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support.postgres import find_binaries, postgres_server

    if not hasattr(_postgres, "server"):
        binaries = find_binaries()
        if binaries is None:
            raise SystemExit("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
        _postgres.server = servers.enter_context(postgres_server(binaries))  # type: ignore[attr-defined]
    url: str = _postgres.server.create_database()  # type: ignore[attr-defined]
    return url


if __name__ == "__main__":
    main()
