"""Local executor vs RayExecutor: speed-up on a CPU-bound scorer, overhead on a cheap one.

Usage: ``python bench/ray_scale.py [--samples 20000] [--tokens 2000] [--cpus 2] [--batch auto]``

1. CPU-bound: ROUGE-L on long texts (``--tokens`` whitespace tokens per side, about 0.7 ms a
   pair here) over ``--samples`` rows, streamed from a generator: the local executor in this one
   process, then ``RayExecutor`` on a local Ray with ``--cpus`` workers. Prints both times, the
   speed-up (target: at least 1.7x on 2 cores) and checks both gave the same score per row.
   ``--batch auto`` (the default) leaves ``batch_size`` unset, so the executor sizes batches by
   the work; a number fixes it. Also prints the driver's CPU time per sample (what this process
   spent making, shipping and collecting samples: a figure other jobs on the machine move less
   than wall time).
2. Cheap: exact_match on short rows, same count: what Ray adds per sample at a few batch sizes.
3. Whole runs: ``run(..., scorers=[rouge_l])`` on the same long rows, stored in SQLite, with
   the local executor and with ``executor="ray"`` (the driver reads, ships and stores every
   sample while the workers score), checking both stored the same scores.

``--part executors`` runs 1 and 2, ``--part run`` runs 3; the default runs all.

Ray start-up is timed apart (it happens once per run). The machine is shared: run ``uptime``
beside the figures and repeat when the load is low.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

from aieval.runner import Finished, LocalExecutor, RayExecutor
from aieval.scorers import exact_match, rouge_l

Row = dict[str, Any]


def long_rows(samples: int, tokens: int, seed: int = 0, pool: int = 400) -> Iterator[Row]:
    """Rows of long prediction/expected texts, generated lazily from a pool of texts."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(3000)]
    texts = [
        " ".join(rng.choices(vocab, k=rng.randint(tokens * 3 // 4, tokens * 5 // 4)))
        for _ in range(pool)
    ]
    for i in range(samples):
        yield {"id": str(i), "prediction": texts[i % pool], "expected": texts[(i * 7 + 3) % pool]}


def short_rows(samples: int) -> Iterator[Row]:
    """Rows whose prediction matches the expected answer every other time."""
    for i in range(samples):
        yield {"id": str(i), "prediction": str(i % 10), "expected": str(i % 5)}


def score_rouge(row: Row) -> float:
    """The CPU-bound per-sample work."""
    return float(rouge_l(row["prediction"], row["expected"]))


def score_exact(row: Row) -> float:
    """The cheap per-sample work."""
    return float(exact_match(row["prediction"], row["expected"]))


async def drain(executor: Any, fn: Callable[[Row], float], rows: Iterator[Row]) -> list[float]:
    """Run every row; the scores in row order, failing loudly on any recorded error."""
    results: list[Finished[Row, float]] = [done async for done in executor.map(fn, rows)]
    errors = [done.error for done in results if done.error]
    if errors:
        raise SystemExit(f"{len(errors)} samples failed, e.g. {errors[0]}")
    results.sort(key=lambda done: done.index)
    return [float(done.value or 0.0) for done in results]


def timed(
    executor: Any, fn: Callable[[Row], float], rows: Iterator[Row]
) -> tuple[float, list[float]]:
    started = time.perf_counter()
    scores = asyncio.run(drain(executor, fn, rows))
    return time.perf_counter() - started, scores


def batch_size(text: str) -> int | None:
    """``auto`` (sized by the work) or a fixed number of items per batch."""
    return None if text == "auto" else int(text)


def start_ray(cpus: int) -> None:
    """A local Ray with ``cpus`` workers, no dashboard and a small object store."""
    import ray

    ray.init(
        address="local",
        num_cpus=cpus,
        include_dashboard=False,
        object_store_memory=256 * 1024 * 1024,
        log_to_driver=False,
    )


def whole_runs(n: int, tokens: int, cpus: int) -> None:
    """run() with the local executor, then with executor="ray" (the Ray started by main)."""
    import tempfile
    from pathlib import Path

    from aieval import Store, run

    rows = [{**row, "prompt": row["id"]} for row in long_rows(n, tokens)]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        timings, ids = {}, {}
        for executor in ("local", "ray"):
            started = time.perf_counter()
            result = run(
                name=f"bench-{executor}",
                dataset=rows,
                scorers=[rouge_l],
                store=db,
                executor=executor,
            )
            timings[executor] = time.perf_counter() - started
            ids[executor] = result.id
            if result.error_count:
                raise SystemExit(f"{executor}: {result.error_count} samples failed")
        store = Store(db)
        scores = {
            executor: {s.id: s.scores["rouge_l"].value for s in store.iter_samples(run_id)}
            for executor, run_id in ids.items()
        }
        if scores["ray"] != scores["local"]:
            raise SystemExit("the two runs stored different scores")
    local_s, ray_s = timings["local"], timings["ray"]
    print(f"\nrun(), ROUGE-L, {n} samples of ~{tokens} tokens a side, stored (same scores: yes)")
    print(f"  executor='local'            {local_s:7.2f} s  {n / local_s:8.0f} samples/s")
    print(
        f"  executor='ray', {cpus} workers  {ray_s:7.2f} s  {n / ray_s:8.0f} samples/s  "
        f"speed-up {local_s / ray_s:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--batch", type=batch_size, default=None, help="'auto' or a number")
    parser.add_argument("--part", choices=["executors", "run", "all"], default="all")
    args = parser.parse_args()

    import ray

    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, ray {ray.__version__}, load {os.getloadavg()[0]:.2f}"
    )
    n = args.samples
    if args.part == "run":
        start_ray(args.cpus)
        try:
            whole_runs(n, args.tokens, args.cpus)
        finally:
            ray.shutdown()
        return
    local_s, local_scores = timed(LocalExecutor(16), score_rouge, long_rows(n, args.tokens))
    started = time.perf_counter()
    start_ray(args.cpus)
    startup_s = time.perf_counter() - started
    try:
        ray_exec = RayExecutor(batch_size=args.batch)
        cpu = time.process_time()
        ray_s, ray_scores = timed(ray_exec, score_rouge, long_rows(n, args.tokens))
        driver_us = (time.process_time() - cpu) / n * 1e6
        batch = "auto" if args.batch is None else args.batch
        if ray_scores != local_scores:
            raise SystemExit("Ray and local scores differ")
        print(f"\nROUGE-L, {n} samples of ~{args.tokens} tokens a side (same scores: yes)")
        print(f"  local executor, 1 process   {local_s:7.2f} s  {n / local_s:8.0f} samples/s")
        print(
            f"  Ray, {args.cpus} workers, batch {batch:<4} {ray_s:7.2f} s  {n / ray_s:8.0f} "
            f"samples/s  speed-up {local_s / ray_s:.2f}x (target >= 1.7x)"
        )
        print(
            f"  Ray start-up (once per run)  {startup_s:6.2f} s; with it: "
            f"{local_s / (ray_s + startup_s):.2f}x; peak in flight {ray_exec.peak_in_flight}"
        )
        print(
            f"  driver CPU {driver_us:.0f} us/sample; largest batch {ray_exec.largest_batch} items"
        )

        cheap_local, cheap_scores = timed(LocalExecutor(16), score_exact, short_rows(n))
        print(
            f"\nexact_match, {n} short samples: local {cheap_local:.2f} s "
            f"({cheap_local / n * 1e6:.1f} us/sample)"
        )
        for size in (16, 64, 256, 1024, None):
            cheap_exec = RayExecutor(batch_size=size)
            cheap_ray, scores = timed(cheap_exec, score_exact, short_rows(n))
            if scores != cheap_scores:
                raise SystemExit("Ray and local scores differ")
            label = size or f"auto (largest {cheap_exec.largest_batch})"
            print(
                f"  Ray batch {label:<5} {cheap_ray:6.2f} s  "
                f"{cheap_ray / n * 1e6:6.1f} us/sample  adds "
                f"{(cheap_ray - cheap_local) / n * 1e6:+6.1f} us/sample"
            )
        if args.part == "all":
            whole_runs(n, args.tokens, args.cpus)
    finally:
        ray.shutdown()
    print(f"\nload after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
