"""Store write throughput: 8 writers to one local PostgreSQL against one writer to SQLite.

Every writer is a process calling ``run()`` on recorded predictions (``exact_match``), so what
is timed is the runner's real write path: each event-loop step's finished samples are committed
in one transaction by the runner's sample writer (on PostgreSQL on a thread, the samples that
finish during a commit making up the next). ``--batch`` is the run's concurrency: how many
samples finish per event-loop step (a slow target finishes few per step, a fast one many).
Throughput is every writer's samples over the wall time from the first start to the last end;
each writer first runs a small warm-up run, outside the timing.

``--before REV`` (default: the code before this round of write work: ``samples_run`` still
indexed on PostgreSQL, an imported run written by ``executemany``) times that revision's
code side by side in the same run, and prints the ratio. Where the bench starts its own server,
it also prints the CPU spent per sample by the writers (every thread of each process) and by the
server (its sessions, read from the postmaster's reaped children), so a figure below the target
says what bounds it: on a 2-core machine the two together cannot pass 2 CPU-seconds a second.

Usage::

    python bench/store_writes.py                       # starts its own PostgreSQL (initdb)
    python bench/store_writes.py --samples 5000 --writers 8 --batch 1 --batch 16
    python bench/store_writes.py --pg postgresql://me@127.0.0.1:5432/bench
    python bench/store_writes.py --before none         # the current code only
    python bench/store_writes.py --batch 1 --import-samples 0   # no import timing

The last lines time an import (``Store.import_run``, what ``aieval push`` and ``copy`` write) of
one run of ``--import-samples`` samples into the same PostgreSQL, now and before.

Without ``--pg`` a PostgreSQL server is started in a temporary folder with Debian's server
binaries and its default durability (``fsync`` and ``synchronous_commit`` on); SQLite runs in
the store's own mode (WAL, ``synchronous=NORMAL``).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import queue
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The code before the last round of write work (see ``--before``); ``5f01ab6`` is the commit
#: before sample batches went to PostgreSQL by COPY (one JSON statement per batch).
BEFORE_REV = "2f62654"


@dataclass(frozen=True)
class Measured:
    """One measurement: samples per second, and CPU seconds per sample of writers and server."""

    rate: float
    writer_cpu: float
    server_cpu: float | None


def _writer(
    src: str | None, location: str, name: str, samples: int, batch: int, start: Any, out: Any
) -> None:
    if src is not None:
        sys.path.insert(0, src)
    from aieval import run
    from aieval.scorers import exact_match

    rows = [
        {"id": f"s{i}", "prompt": f"q{i} " + "x" * 200, "expected": "yes", "prediction": "yes"}
        for i in range(samples)
    ]
    run(name=f"{name}-warmup", dataset=rows[:20], scorers=[exact_match], store=location)
    start.wait()
    began, cpu = time.perf_counter(), time.process_time()
    result = run(name=name, dataset=rows, scorers=[exact_match], store=location, concurrency=batch)
    ended, cpu = time.perf_counter(), time.process_time() - cpu
    if result.status != "completed" or result.summary["samples"] != samples:
        raise SystemExit(f"{name}: {result.status}, {result.summary['samples']} samples stored")
    out.put((began, ended, cpu))


def _importer(src: str | None, location: str, samples: int, folder: str, go: Any, out: Any) -> None:
    """Import (as ``aieval push`` and ``copy`` do) a run of ``samples`` stored in SQLite."""
    if src is not None:
        sys.path.insert(0, src)
    from aieval import Store, run
    from aieval.scorers import exact_match

    rows = [
        {"id": f"s{i}", "prompt": f"q{i} " + "x" * 200, "expected": "yes", "prediction": "yes"}
        for i in range(samples)
    ]
    local = str(Path(folder) / f"{uuid.uuid4().hex}.db")
    result = run(name="import", dataset=rows, scorers=[exact_match], store=local)
    with Store(local) as source:
        header, stored = source.get_run(result.id), list(source.stored_samples(result.id))
    team = Store(location)
    out.put(None)
    go.wait()
    began, cpu = time.perf_counter(), time.process_time()
    team.import_run(header, stored)
    ended, cpu = time.perf_counter(), time.process_time() - cpu
    team.close()
    out.put((began, ended, cpu))


def measure_import(
    location: str, samples: int, folder: Path, src: str | None, postmaster: int | None
) -> Measured:
    """One run of ``samples`` imported into the store (its own process, as ``measure``)."""
    ctx = multiprocessing.get_context("spawn")
    go, out = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=_importer, args=(src, location, samples, str(folder), go, out))
    proc.start()
    out.get()  # the source run is made and the store opened: the import alone is timed
    server_before = _server_cpu(postmaster)
    go.set()
    began, ended, cpu = out.get()
    proc.join()
    if proc.exitcode != 0:
        raise SystemExit(f"the import failed (exit code {proc.exitcode})")
    server = _server_cpu(postmaster) - server_before
    return Measured(
        samples / (ended - began), cpu / samples, server / samples if postmaster else None
    )


def _server_cpu(postmaster: int | None) -> float:
    """CPU seconds the server has used: the postmaster, its live children and those reaped."""
    if postmaster is None:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in [postmaster, *_children(postmaster)]:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:13]) / tick
        if pid == postmaster:
            total += sum(int(f) for f in fields[13:15]) / tick
    return total


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def measure(
    location: str,
    writers: int,
    samples: int,
    batch: int,
    src: str | None = None,
    postmaster: int | None = None,
) -> Measured:
    """Samples per second stored by ``writers`` processes together (running the code of
    ``src``, the current code when ``None``), and the CPU it took."""
    ctx = multiprocessing.get_context("spawn")
    # the main process waits at the barrier too, so the server's CPU is read after the writers'
    # warm-up runs (their connections, the schema's checks) and counts the timed runs alone
    start = ctx.Barrier(writers + 1)
    out = ctx.Queue()
    tag = uuid.uuid4().hex[:6]
    procs = [
        ctx.Process(target=_writer, args=(src, location, f"w{tag}-{i}", samples, batch, start, out))
        for i in range(writers)
    ]
    for proc in procs:
        proc.start()
    start.wait(timeout=600)
    server_before = _server_cpu(postmaster)
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
    # the sessions have ended with their writers: the postmaster holds their CPU time
    server = _server_cpu(postmaster) - server_before
    wall = max(end for _, end, _ in spans) - min(begin for begin, _, _ in spans)
    n = writers * samples
    return Measured(n / wall, sum(cpu for *_, cpu in spans) / n, server / n if postmaster else None)


def export_source(rev: str, into: Path) -> str:
    """The ``src`` folder of git revision ``rev``, exported under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
    )
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return str(into / "src")


def _cpu(m: Measured) -> str:
    """CPU per sample, and the rate two free cores could at most sustain at that cost."""
    text = f"writers {m.writer_cpu * 1e6:4.0f} us"
    if m.server_cpu is None:
        return text + " CPU/sample"
    total = m.writer_cpu + m.server_cpu
    return (
        text + f" + server {m.server_cpu * 1e6:3.0f} us CPU/sample (2 cores: <= {2 / total:6.0f}/s)"
    )


def _line(label: str, now: Measured, before: Measured | None, sqlite: Measured) -> None:
    versus = f"{now.rate / sqlite.rate:5.2f}x SQLite"
    ratio = "" if before is None else f", {now.rate / before.rate:5.2f}x before"
    print(f"  {label:24s}{now.rate:7.0f} samples/s  ({versus}{ratio})  {_cpu(now)}")
    if before is not None:
        print(f"  {'  before':24s}{before.rate:7.0f} samples/s  {'':26s}{_cpu(before)}")


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=4000, help="samples per writer")
    parser.add_argument("--writers", type=int, default=8, help="PostgreSQL writers")
    parser.add_argument(
        "--batch", type=int, action="append", help="run concurrency (repeatable; default 1, 16)"
    )
    parser.add_argument("--pg", help="a PostgreSQL database URL (default: start a server)")
    parser.add_argument(
        "--before",
        default=BEFORE_REV,
        help="git revision to time side by side with the current code ('none': do not)",
    )
    parser.add_argument(
        "--import-samples",
        type=int,
        default=20000,
        help="samples of the run imported (push, copy) into PostgreSQL; 0: none",
    )
    args = parser.parse_args()
    batches = args.batch or [1, 16]
    with ExitStack() as stack:
        url = args.pg
        postmaster = None
        if url is None:
            sys.path.insert(0, str(ROOT))
            from tests.support.postgres import find_binaries, postgres_server

            binaries = find_binaries()
            if binaries is None:
                raise SystemExit("no PostgreSQL server binaries: pass --pg URL")
            server = stack.enter_context(postgres_server(binaries, durable=True))
            url = server.create_database()
            pid_file = server.folder / "data" / "postmaster.pid"
            postmaster = int(pid_file.read_text().split()[0])
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        before = None if args.before == "none" else export_source(args.before, tmp / "before")
        print(f"{args.samples} samples per writer, exact_match on recorded predictions")
        for batch in batches:
            print(f"run concurrency {batch} ({_load()}):")
            sqlite = measure(str(tmp / f"b{batch}.db"), 1, args.samples, batch)
            _line("SQLite, 1 writer", sqlite, None, sqlite)
            for writers in (1, args.writers):
                old = None
                if before is not None:
                    old = measure(url, writers, args.samples, batch, before, postmaster)
                now = measure(url, writers, args.samples, batch, None, postmaster)
                _line(f"PostgreSQL, {writers} writer{'s' * (writers > 1)}", now, old, sqlite)
            print(f"  ({_load()})")
        if args.import_samples:
            print(f"import of a {args.import_samples}-sample run ({_load()}):")
            now = measure_import(url, args.import_samples, tmp, None, postmaster)
            old = None
            if before is not None:
                old = measure_import(url, args.import_samples, tmp, before, postmaster)
            ratio = "" if old is None else f"  ({now.rate / old.rate:5.2f}x before)"
            print(f"  {'now':24s}{now.rate:7.0f} samples/s{ratio}  {_cpu(now)}")
            if old is not None:
                print(f"  {'before':24s}{old.rate:7.0f} samples/s  {_cpu(old)}")
            print(f"  ({_load()})")


if __name__ == "__main__":
    main()
