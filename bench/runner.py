"""Runner benchmarks: per-sample overhead offline, wall time against a 200 ms server, peak RSS.

Usage::

    python bench/runner.py                      # all three parts with defaults
    python bench/runner.py --part overhead --samples 20000
    python bench/runner.py --part latency --samples 2000 --concurrency 100 --delay 0.2
    python bench/runner.py --part memory --rows 1000000
    python bench/runner.py --part telemetry --samples 20000   # needs the otel extra
    python bench/runner.py --part scale --rows 1000000 --before 5f01ab6

Peers are measured in the same run when installed (the raw ``openai`` SDK for the latency part);
otherwise their figures from the project's anchors are printed for reference.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Peer figures measured on a 2-core machine like ours (shared/ANCHORS.md), for reference only.
ANCHOR_OVERHEAD_MS = {"inspect_ai 0.3.285": 13.0, "promptfoo 0.121": 5.5, "deepeval 4.3": 2.2}


def overhead(samples: int) -> dict[str, float]:
    """Per-sample cost of run() on recorded predictions with exact_match, stored and in memory."""
    from aieval import run
    from aieval.scorers import exact_match

    rows = [
        {
            "id": f"s{i}",
            "prompt": f"question {i}",
            "expected": "yes",
            "prediction": "yes" if i % 3 else "no",
        }
        for i in range(samples)
    ]
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, store in (("in memory", False), ("SQLite store", Path(tmp) / "b.db")):
            run(name="warmup", dataset=rows[:50], scorers=[exact_match], store=store)
            small = _timed(
                lambda s=store: run(
                    name="o",
                    dataset=rows[:100],  # type: ignore[misc]
                    scorers=[exact_match],
                    store=s,
                )
            )
            big = _timed(
                lambda s=store: run(name="o", dataset=rows, scorers=[exact_match], store=s)
            )
            per_sample_ms = (big - small) / (samples - 100) * 1000
            out[label] = per_sample_ms
            print(
                f"  {label:14s} {samples} samples in {big:6.2f} s -> {per_sample_ms:.3f} ms/sample"
            )
    best = out["SQLite store"]
    for peer, ms in ANCHOR_OVERHEAD_MS.items():
        print(f"  vs {peer:20s} (anchor {ms:5.1f} ms/sample): {ms / best:6.1f}x less per sample")
    return out


def telemetry(samples: int) -> dict[str, float]:
    """Per-sample cost of live OpenTelemetry spans (SDK, batch processor, spans discarded)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    from aieval import run
    from aieval.scorers import exact_match

    class Discard(SpanExporter):
        def export(self, spans: object) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    rows = [
        {"id": f"s{i}", "prompt": f"q{i}", "expected": "yes", "prediction": "yes"}
        for i in range(samples)
    ]
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Discard(), max_queue_size=samples + 10))
    out: dict[str, float] = {}
    for label, options in (
        ("telemetry off", {}),
        ("telemetry on", {"tracer_provider": provider}),
    ):
        run(name="warmup", dataset=rows[:50], scorers=[exact_match], store=False, **options)
        small = _timed(
            lambda o=options: run(  # type: ignore[misc]
                name="t", dataset=rows[:100], scorers=[exact_match], store=False, **o
            )
        )
        big = _timed(
            lambda o=options: run(  # type: ignore[misc]
                name="t", dataset=rows, scorers=[exact_match], store=False, **o
            )
        )
        out[label] = (big - small) / (samples - 100) * 1000
        print(f"  {label:14s} {out[label]:.3f} ms/sample")
    provider.shutdown()
    print(f"  spans cost {out['telemetry on'] - out['telemetry off']:.3f} ms/sample")
    return out


def latency(samples: int, concurrency: int, delay: float) -> dict[str, float]:
    """Wall time of provider calls against a loopback server answering after ``delay`` seconds."""
    from aieval import run
    from aieval.scorers import exact_match

    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, str(HERE / "_latency_server.py"), str(port), str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        base_url = f"http://127.0.0.1:{port}/v1"
        rows = [{"id": f"s{i}", "prompt": f"question {i}", "expected": "x"} for i in range(samples)]
        ideal = samples * delay / concurrency
        results: dict[str, float] = {"ideal": ideal}
        cpu0 = time.process_time()
        with tempfile.TemporaryDirectory() as tmp:
            wall = _timed(
                lambda: run(
                    name="latency",
                    dataset=rows,
                    scorers=[exact_match],
                    provider="openai-compatible",
                    base_url=base_url,
                    model="bench",
                    concurrency=concurrency,
                    cache=False,
                    store=Path(tmp) / "b.db",
                )
            )
        cpu = time.process_time() - cpu0
        results["aieval"] = wall
        print(f"  ideal (N x latency / concurrency): {ideal:.2f} s")
        print(
            f"  aieval run():        {wall:6.2f} s  ({wall / ideal:.3f}x ideal, "
            f"{cpu / samples * 1000:.2f} ms CPU per sample)"
        )
        cpu0 = time.process_time()
        sdk = _openai_sdk(base_url, samples, concurrency)
        cpu = time.process_time() - cpu0
        if sdk is not None:
            results["openai SDK"] = sdk
            print(
                f"  raw openai SDK:      {sdk:6.2f} s  ({sdk / ideal:.3f}x ideal, "
                f"{cpu / samples * 1000:.2f} ms CPU per sample); "
                f"aieval is {sdk / wall:.2f}x faster"
            )
        else:
            print("  raw openai SDK: not installed (pip install openai) - skipped")
        return results
    finally:
        server.terminate()
        server.wait()


def _openai_sdk(base_url: str, samples: int, concurrency: int) -> float | None:
    try:
        from openai import AsyncOpenAI
    except ImportError:
        return None

    async def main() -> None:
        client = AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with gate:
                await client.chat.completions.create(
                    model="bench", messages=[{"role": "user", "content": f"question {i}"}]
                )

        await asyncio.gather(*(one(i) for i in range(samples)))
        await client.close()

    return _timed(lambda: asyncio.run(main()))


def memory(rows: int) -> dict[str, float]:
    """Peak RSS of scoring a ``rows``-row JSONL of recorded predictions with the built-ins."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "big.jsonl"
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
        with data.open("w") as handle:
            for i in range(rows):
                pred = " ".join(words[(i % 5) :])
                handle.write(
                    json.dumps(
                        {
                            "id": i,
                            "prompt": f"q{i}",
                            "expected": " ".join(words),
                            "prediction": pred,
                        }
                    )
                    + "\n"
                )
        code = (
            "import resource, sys, time\n"
            "from aieval import run\n"
            "from aieval.scorers import exact_match, json_valid, rouge_l, token_f1\n"
            "t = time.perf_counter()\n"
            "r = run(name='mem', dataset=sys.argv[1], scorers=[exact_match, json_valid, rouge_l,"
            " token_f1], store=sys.argv[2])\n"
            "print(r.summary['samples'], time.perf_counter() - t,"
            " resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(data), str(Path(tmp) / "m.db")],
            capture_output=True,
            text=True,
            check=True,
        )
        count, seconds, peak_mb = done.stdout.split()
        print(
            f"  {count} rows scored in {float(seconds):.1f} s, peak RSS {float(peak_mb):.0f} MB "
            f"(target < 300 MB)"
        )
        return {"rows": float(count), "seconds": float(seconds), "peak_rss_mb": float(peak_mb)}


#: The commit before the runner scored exact_match, token_f1 and json_valid in batches.
BEFORE = "5f01ab6"

_SCALE_EVAL = """name: scale
dataset: {data}
scorers: [exact_match, token_f1, rouge_l, json_valid]
"""


def scale(rows: int, before: str | None) -> dict[str, float]:
    """``aieval run`` of ``rows`` recorded rows x four built-in scorers into a new SQLite file,
    end to end in a fresh process (wall, CPU, peak RSS), by this code and by ``before``'s."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write_rows(folder / "rows.jsonl", rows)
        (folder / "scale.yaml").write_text(_SCALE_EVAL.format(data="rows.jsonl"))
        sources: list[tuple[str, Path | None]] = [("this code", None)]
        if before:
            sources.insert(0, (f"before ({before})", _export_source(before, folder / "before")))
        out: dict[str, float] = {}
        cpu: dict[str, float] = {}
        print(f"  {_load()} at the start")
        for label, src in sources:
            figures = _cli_run(folder, src)
            out[label], cpu[label] = figures["seconds"], figures["cpu"]
            print(
                f"  {label:22s} {figures['seconds']:7.1f} s wall, {figures['cpu']:7.1f} s CPU "
                f"({figures['cpu'] / rows * 1e6:.0f} us/row), peak RSS "
                f"{figures['peak_mb']:.0f} MB ({rows / figures['seconds']:,.0f} rows/s)"
            )
        if before:
            old, new = out[sources[0][0]], out["this code"]
            print(f"  this code is {old / new:.2f}x the speed of the code before (wall)")
            ratio = cpu["this code"] / cpu[sources[0][0]]
            print(f"  this code takes {ratio:.2f}x the CPU of the code before")
        for peer, ms in ANCHOR_OVERHEAD_MS.items():
            estimate = ms * rows / 1000  # one exact_match each, no storage: a floor for them
            print(f"  vs {peer:20s} (anchor {ms} ms/sample, one scorer): >= {estimate:,.0f} s")
        print(f"  target: 1,000,000 rows x 4 scorers in <= 60 s; load now: {_load()}")
        return out


def _cli_run(folder: Path, src: Path | None) -> dict[str, float]:
    """Seconds, CPU seconds and peak MB of ``aieval run`` of the folder's eval in a child."""
    db = folder / "scale.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    code = (
        "import resource, sys, time\n"
        "from aieval.cli import main\n"
        "t = time.perf_counter()\n"
        "try:\n"
        "    main(['run', 'scale.yaml', '--db', 'scale.db', '--quiet'])\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "usage = resource.getrusage(resource.RUSAGE_SELF)\n"
        "print(time.perf_counter() - t, usage.ru_utime + usage.ru_stime,"
        " usage.ru_maxrss / 1024)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    seconds, cpu, peak = done.stdout.split()[-3:]
    return {"seconds": float(seconds), "cpu": float(cpu), "peak_mb": float(peak)}


def _write_rows(path: Path, rows: int) -> None:
    """``rows`` support answers of varied length with recorded predictions (a third exact, a
    third edited, a third other text; every tenth a JSON answer)."""
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
        "in",
        "their",
        "box",
    ]
    with path.open("w") as handle:
        for i in range(rows):
            expected = " ".join(words[: 4 + i % 11])
            kind = i % 3
            if i % 10 == 0:
                prediction = json.dumps({"answer": expected, "id": i})
            elif kind == 0:
                prediction = expected
            elif kind == 1:
                prediction = " ".join(words[(i % 5) : 6 + i % 9]).upper()
            else:
                prediction = f"order {i} ships {words[i % len(words)]}"
            handle.write(
                json.dumps(
                    {
                        "id": i,
                        "input": f"question {i}",
                        "expected": expected,
                        "prediction": prediction,
                    }
                )
                + "\n"
            )


def _export_source(rev: str, into: Path) -> Path:
    """The ``src`` folder of git revision ``rev``, exported under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(HERE.parent), "archive", rev, "src"], capture_output=True, check=True
    )
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f}"


def _timed(fn: object) -> float:
    started = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - started


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part",
        choices=["overhead", "latency", "memory", "telemetry", "scale", "all"],
        default="all",
    )
    parser.add_argument(
        "--before",
        default=BEFORE,
        help="scale: also time the code of this git revision ('none': skip)",
    )
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    if args.part in ("overhead", "all"):
        print("per-sample overhead (offline, recorded predictions, exact_match):")
        overhead(args.samples or 20_000)
    if args.part in ("latency", "all"):
        print(
            f"latency-bound: {args.samples or 2000} samples, {args.delay * 1000:.0f} ms per "
            f"call, concurrency {args.concurrency}:"
        )
        latency(args.samples or 2000, args.concurrency, args.delay)
    if args.part == "telemetry":
        print("live OpenTelemetry spans (in memory, recorded predictions, exact_match):")
        telemetry(args.samples or 20_000)
    if args.part == "scale":
        print(f"scale: aieval run of {args.rows:,} recorded rows x 4 scorers into SQLite:")
        scale(args.rows, None if args.before == "none" else args.before)
    if args.part in ("memory", "all"):
        print(f"memory: {args.rows} rows of recorded predictions, four built-in scorers:")
        memory(args.rows)


if __name__ == "__main__":
    main()
