"""Runner benchmarks: per-sample overhead offline, wall time against a 200 ms server, peak RSS.

Usage::

    python bench/runner.py                      # all three parts with defaults
    python bench/runner.py --part overhead --samples 20000
    python bench/runner.py --part latency --samples 2000 --concurrency 100 --delay 0.2
    python bench/runner.py --part memory --rows 1000000
    python bench/runner.py --part telemetry --samples 20000   # needs the otel extra

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
        "--part", choices=["overhead", "latency", "memory", "telemetry", "all"], default="all"
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
    if args.part in ("memory", "all"):
        print(f"memory: {args.rows} rows of recorded predictions, four built-in scorers:")
        memory(args.rows)


if __name__ == "__main__":
    main()
