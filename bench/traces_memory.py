"""Peak memory reading a 1 GB OTLP/JSON trace file, and refusing one huge line.

Usage: ``python bench/traces_memory.py [--gb 1.0] [--budgets 64 256] [--huge-line-mb 312]``

Makes 500 agent traces with the OpenTelemetry SDK (the traces of ``bench/traces.py``: 12 spans
each), writes them as the collector's file exporter does (OTLP/JSON lines of 512-span export
batches), then copies those lines with fresh trace ids until the file in a temporary folder
reaches ``--gb`` gigabytes. Each case then runs in a fresh process that reads, groups and maps
every trace to a workflow run (``iter_trace_runs``), and prints its peak RSS, wall and CPU time:

- grouping bounded by bytes (``max_bytes_in_memory``, each of ``--budgets`` MiB; 128 is the
  default), the span count never reached;
- grouping bounded by span count only (500,000 spans, the bound before the byte budget).

Last, a file whose one line is ``--huge-line-mb`` MB (one export request holding all its spans)
is read with the default 64 MiB request limit: refused, naming file, line, size and limit.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from traces import make_spans, write_files  # the generator of bench/traces.py

_TRACE_ID = re.compile(rb'("traceId":")[0-9a-f]{8}')
# the peak of this process's own memory (VmHWM): ru_maxrss keeps the parent's across exec
_PEAK = """
def peak_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
"""
_CHILD = (
    _PEAK
    + """
import json, sys, time
from aieval.errors import WorkflowError
from aieval.traces import TraceReading, iter_trace_runs
path, spans, budget = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
wall, cpu = time.perf_counter(), time.process_time()
reading, error = TraceReading(), None
try:
    for run in iter_trace_runs(path, reading, max_spans_in_memory=spans,
                               max_bytes_in_memory=budget):
        pass
except WorkflowError as exc:
    error = str(exc)
print(json.dumps({
    "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
    "peak_mb": peak_mb(),
    "spans": reading.spans, "traces": reading.traces, "spills": reading.spills,
    "incomplete": len(reading.incomplete), "error": error,
}))
"""
)
_BASELINE = _PEAK + "import aieval.traces\nprint(peak_mb())"


def write_big(folder: Path, gigabytes: float) -> tuple[Path, int]:
    """The template traces' lines, copied with fresh trace ids up to ``gigabytes``."""
    _, _, _ = write_files(make_spans(500), 512, folder)
    lines = (folder / "traces.jsonl").read_bytes()
    big, target, copies = folder / "big.jsonl", int(gigabytes * 1e9), 0
    with big.open("wb") as out:
        while out.tell() < target:
            out.write(_TRACE_ID.sub(rb"\g<1>" + b"%08x" % copies, lines))
            copies += 1
    return big, copies * 500


def write_huge_line(folder: Path, megabytes: int) -> Path:
    """One export request of ``megabytes``: every resource's spans of the template, repeated."""
    requests = [json.loads(line) for line in (folder / "traces.jsonl").read_text().splitlines()]
    piece = json.dumps([rs for r in requests for rs in r["resourceSpans"]])[1:-1].encode()
    huge = folder / "huge.jsonl"
    with huge.open("wb") as out:
        out.write(b'{"resourceSpans":[')
        for i in range(megabytes * 10**6 // len(piece) + 1):
            out.write((b"," if i else b"") + piece)
        out.write(b"]}\n")
    return huge


def measure(path: Path, spans: int, budget: int) -> dict[str, object]:
    args = [sys.executable, "-c", _CHILD, str(path), str(spans), str(budget)]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--budgets", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--huge-line-mb", type=int, default=312)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        big, traces = write_big(folder, args.gb)
        size = big.stat().st_size
        print(
            f"{size / 1e9:.2f} GB OTLP/JSON, {traces:,} traces, written in "
            f"{time.perf_counter() - started:.0f} s"
        )
        baseline = [sys.executable, "-c", _BASELINE]
        base = float(subprocess.run(baseline, capture_output=True, text=True, check=True).stdout)
        print(f"a fresh process importing aieval.traces: peak RSS {base:.0f} MB")
        cases = [(f"byte budget {mb} MiB", 10**12, mb * 2**20) for mb in args.budgets]
        cases.append(("500,000 spans, no byte budget (the old bound)", 500_000, 2**62))
        print(
            "| grouping bound | peak RSS | spills | spans | traces | wall | CPU | spans/s (CPU) |"
            "\n|---|---:|---:|---:|---:|---:|---:|---:|"
        )
        for label, spans, budget in cases:
            r = measure(big, spans, budget)
            assert r["error"] is None and r["incomplete"] == 0, r
            print(
                f"| {label} | {r['peak_mb']:.0f} MB | {r['spills']} | {r['spans']:,} | "
                f"{r['traces']:,} | {r['wall']:.0f} s | {r['cpu']:.0f} s | "
                f"{int(r['spans']) / float(r['cpu']):,.0f} |"  # type: ignore[arg-type]
            )
        big.unlink()
        huge = write_huge_line(folder, args.huge_line_mb)
        r = measure(huge, 500_000, 128 * 2**20)
        print(
            f"\none line of {huge.stat().st_size / 1e6:.0f} MB, default limits: peak RSS "
            f"{r['peak_mb']:.0f} MB, {r['wall']:.1f} s\n{r['error']}"
        )


if __name__ == "__main__":
    main()
