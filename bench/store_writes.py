"""Store write throughput: 8 writers to one local PostgreSQL against one writer to SQLite.

Every writer is a process calling ``run()`` on recorded predictions (``exact_match``), so what
is timed is the runner's real write path: each event-loop step's finished samples are committed
in one transaction by the runner's sample writer (on PostgreSQL on a thread, the samples that
finish during a commit making up the next). ``--batch`` is the run's concurrency: how many
samples finish per event-loop step (a slow target finishes few per step, a fast one many).
Throughput is every writer's samples over the wall time from the first start to the last end;
each writer first runs a small warm-up run, outside the timing.

Usage::

    python bench/store_writes.py                       # starts its own PostgreSQL (initdb)
    python bench/store_writes.py --samples 5000 --writers 8 --batch 1 --batch 16
    python bench/store_writes.py --pg postgresql://me@127.0.0.1:5432/bench

Without ``--pg`` a PostgreSQL server is started in a temporary folder with Debian's server
binaries and its default durability (``fsync`` and ``synchronous_commit`` on); SQLite runs in
the store's own mode (WAL, ``synchronous=NORMAL``).
"""

from __future__ import annotations

import argparse
import multiprocessing
import queue
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _writer(location: str, name: str, samples: int, batch: int, start: Any, out: Any) -> None:
    from aieval import run
    from aieval.scorers import exact_match

    rows = [
        {"id": f"s{i}", "prompt": f"q{i} " + "x" * 200, "expected": "yes", "prediction": "yes"}
        for i in range(samples)
    ]
    run(name=f"{name}-warmup", dataset=rows[:20], scorers=[exact_match], store=location)
    start.wait()
    began = time.perf_counter()
    result = run(name=name, dataset=rows, scorers=[exact_match], store=location, concurrency=batch)
    ended = time.perf_counter()
    if result.status != "completed" or result.summary["samples"] != samples:
        raise SystemExit(f"{name}: {result.status}, {result.summary['samples']} samples stored")
    out.put((began, ended))


def measure(location: str, writers: int, samples: int, batch: int) -> float:
    """Samples per second stored by ``writers`` processes together."""
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(writers)
    out = ctx.Queue()
    tag = uuid.uuid4().hex[:6]
    procs = [
        ctx.Process(target=_writer, args=(location, f"w{tag}-{i}", samples, batch, start, out))
        for i in range(writers)
    ]
    for proc in procs:
        proc.start()
    spans = []
    while len(spans) < writers:
        try:
            spans.append(out.get(timeout=1))
        except queue.Empty:
            if any(proc.exitcode not in (None, 0) for proc in procs):
                for proc in procs:
                    proc.kill()
                raise SystemExit("a writer failed (see its error above)") from None
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"a writer failed (exit code {proc.exitcode})")
    wall = max(end for _, end in spans) - min(begin for begin, _ in spans)
    return writers * samples / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=4000, help="samples per writer")
    parser.add_argument("--writers", type=int, default=8, help="PostgreSQL writers")
    parser.add_argument(
        "--batch", type=int, action="append", help="run concurrency (repeatable; default 1, 16)"
    )
    parser.add_argument("--pg", help="a PostgreSQL database URL (default: start a server)")
    args = parser.parse_args()
    batches = args.batch or [1, 16]
    with ExitStack() as stack:
        url = args.pg
        if url is None:
            sys.path.insert(0, str(ROOT))
            from tests.support.postgres import find_binaries, postgres_server

            binaries = find_binaries()
            if binaries is None:
                raise SystemExit("no PostgreSQL server binaries: pass --pg URL")
            server = stack.enter_context(postgres_server(binaries, durable=True))
            url = server.create_database()
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        print(f"{args.samples} samples per writer, exact_match on recorded predictions")
        for batch in batches:
            sqlite = measure(str(tmp / f"b{batch}.db"), 1, args.samples, batch)
            pg_one = measure(url, 1, args.samples, batch)
            pg_many = measure(url, args.writers, args.samples, batch)
            print(f"run concurrency {batch}:")
            print(f"  SQLite, 1 writer          {sqlite:9.0f} samples/s")
            print(f"  PostgreSQL, 1 writer      {pg_one:9.0f} samples/s  ({pg_one / sqlite:.2f}x)")
            print(
                f"  PostgreSQL, {args.writers} writers     {pg_many:9.0f} samples/s"
                f"  ({pg_many / sqlite:.2f}x SQLite's one writer)"
            )


if __name__ == "__main__":
    main()
