"""What a run's rollups cost its writer: added by each batch, or built once when the run ends.

Usage::

    python bench/rollup_cost.py                                  # SQLite and PostgreSQL
    python bench/rollup_cost.py --samples 102400 --scorers 4 --backends postgres
    python bench/rollup_cost.py --before 72197d8                 # the per-batch code

Each step writes ``--samples`` samples (``--scorers`` scores each) in batches of 512, as the
runner commits them, into a fresh store, then ends the run (``finish_run``), in a fresh
process: the code of git revision ``--before`` (exported to a temporary folder: its rollups
added by each batch) and the current code (built at the run's end), each with and without its
rollups (the writer's statements, or ``keep_rollups``, patched out). The difference is what
the rollups cost, per sample, in the client's CPU and, on PostgreSQL, the server's (its
backends' CPU read from ``/proc``), the batches and the run's end apart. On a shared machine
read CPU time: the wall time is shown too, with the load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import _load, _postgres, export_source

#: the commit whose rollups each batch added (schema 10)
BEFORE_REV = "72197d8"

_CHILD = """
import json, os, sys, time
from aieval import Store
from aieval._records import SampleRecord, ScoreRecord
from aieval.core import Verdict
location, n, scorers, plain = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if plain == "1":  # the writer without rollups: neither per batch nor at the end
    import aieval.store._sample_writes as writes
    writes.batch_statements = lambda *args: []
    if hasattr(Store, "keep_rollups"):
        Store.keep_rollups = lambda self, run_id: None
server = os.environ.get("BENCH_POSTMASTER")
def server_cpu():
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
store = Store(location)
run_id = store.create_run(name="cost")
names = ["exact", "f1", "rouge", "judge"][:scorers]
batches = [
    [
        SampleRecord(id=f"w{i}", index=i, input={"q": i}, expected="a", prediction="a",
                     scores={name: ScoreRecord(value=float(i % 2) if k == 0 else
                                               ((i * (k + 3)) % 997) / 997)
                             for k, name in enumerate(names)},
                     passed=i % 2 == 0, latency_s=0.01 * (i % 89), metadata={"topic": f"t{i % 7}"},
                     verdict=Verdict(passed=i % 2 == 0, weighted_score=50.0 * (i % 3)))
        for i in range(start, min(start + 512, n))
    ]
    for start in range(0, n, 512)
]
figures = {}
for phase in ("batches", "end"):
    s0, c0, w0 = server_cpu(), time.process_time(), time.perf_counter()
    if phase == "batches":
        for batch in batches:
            store.record_samples(run_id, batch)
    else:
        store.finish_run(run_id, status="completed")
    figures[phase] = {"cpu": time.process_time() - c0, "server": server_cpu() - s0,
                      "wall": time.perf_counter() - w0}
print(json.dumps(figures))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_480)
    parser.add_argument("--scorers", type=int, default=4, choices=range(1, 5))
    parser.add_argument("--backends", nargs="+", choices=["sqlite", "postgres"],
                        default=["sqlite", "postgres"])  # fmt: skip
    parser.add_argument("--before", default=BEFORE_REV)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each step (best kept)")
    args = parser.parse_args()
    print(f"{args.samples} samples, {args.scorers} scorers, batches of 512 (load {_load()})")
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as servers:
        trees = {"per batch": export_source(args.before, Path(tmp) / "before"), "at end": None}
        for backend in args.backends:
            env = dict(os.environ)
            if backend == "postgres":
                _postgres(servers)
                folder = _postgres.server.folder  # type: ignore[attr-defined]
                env["BENCH_POSTMASTER"] = (
                    (folder / "data" / "postmaster.pid").read_text().split()[0]
                )
            costs: dict[str, dict[str, dict[str, float]]] = {}
            for label, tree in trees.items():
                env["PYTHONPATH"] = (
                    str(tree) if tree is not None else os.environ.get("PYTHONPATH", "")
                )
                for plain in ("0", "1"):
                    best: dict[str, dict[str, float]] | None = None
                    for k in range(args.repeat):
                        if backend == "postgres":
                            location = _postgres(servers)
                        else:
                            location = str(Path(tmp) / f"cost-{label[:2]}-{plain}-{k}.db")
                        done = subprocess.run(
                            [sys.executable, "-c", _CHILD, location, str(args.samples),
                             str(args.scorers), plain],
                            capture_output=True, text=True, check=False, env=env,
                        )  # fmt: skip
                        if done.returncode:
                            sys.exit(f"{backend} {label} failed: {done.stderr.strip()[-500:]}")
                        got = json.loads(done.stdout.strip().splitlines()[-1])
                        total = sum(p["cpu"] + p["server"] for p in got.values())
                        if best is None or total < sum(
                            p["cpu"] + p["server"] for p in best.values()
                        ):
                            best = got
                    assert best is not None
                    costs[f"{label}{' plain' if plain == '1' else ''}"] = best
                    line = "  ".join(
                        f"{phase} CPU {p['cpu']:6.2f} s + server {p['server']:6.2f} s"
                        f" (wall {p['wall']:6.2f} s)"
                        for phase, p in best.items()
                    )
                    print(f"  {backend:8s} {label:9s} {'plain' if plain == '1' else 'rollups':7s}"
                          f" {line}  load {_load()}")  # fmt: skip
            for label in trees:
                with_, without = costs[label], costs[f"{label} plain"]
                per = {
                    f"{phase} {kind}": (with_[phase][kind] - without[phase][kind])
                    / args.samples
                    * 1e6
                    for phase in ("batches", "end")
                    for kind in ("cpu", "server")
                }
                total = sum(per.values())
                detail = ", ".join(f"{k} {v:+.1f}" for k, v in per.items())
                print(f"  {backend:8s} rollups {label}: {total:+.1f} us a sample ({detail})")


if __name__ == "__main__":
    main()
