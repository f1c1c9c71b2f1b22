"""Graded report benchmark: build_report and compare_runs of generated workflow runs, sums path
against the record path.

Usage::

    python bench/graded_report.py                                  # 100,000 samples, SQLite
    python bench/graded_report.py --sizes 100000 --backends sqlite postgres
    python bench/graded_report.py --before none                    # without the old code

For each size, two graded workflow runs (baseline and candidate) are generated in the database
itself (``INSERT ... SELECT`` over a row number, as ``bench/report.py`` does for plain runs):
each sample a workflow verdict with a grade, two hard gates, two criteria (one with a critical
floor), a workflow name, the weight coverage of a quarter of them with an unscored criterion and
two agents, its typed columns and its ``sample_values`` rows as the writer makes them, and two
scores. Then, each in a fresh process with its CPU time and peak memory (VmHWM):
``build_report`` from the sums (``report``) and by the record path that graded runs took before
(``report_record``, one record per sample), ``build_report`` by the code of git revision
``--before`` (``report_before``, exported to a temporary folder: the code before graded runs
were summed, which reads them one record at a time), and ``compare_runs`` (closed-form
intervals). CPU time is the client's; on PostgreSQL the server's CPU over the step is shown
too. The machine's load is printed beside them: on a shared machine read the CPU times.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: What is timed, each in a fresh process (``report_before``: ``report`` by the old code).
STEPS = ("report", "report_record", "report_before", "compare")
#: The commit before graded runs were summed in the database.
BEFORE_REV = "2f62654"

_CHILD = """
import json, sys, time
from aieval import Store
import aieval.report._bundle as bundle
from aieval.report import compare_runs
what, location, base, cand = sys.argv[1:5]
store = Store(location)
store.get_run(cand)
if what == "report_record":  # the path graded runs took before: one record per sample
    bundle.sums_report = lambda *args: None
started, cpu = time.perf_counter(), time.process_time()
if what.startswith("report"):
    data = bundle.build_report(store, cand, slice_by=["topic"]).to_dict()
    assert data["graded"] and data["weighted_score"]["method"] != "percentile bootstrap"
    assert data["groups"]["workflow"] and data["groups"]["agents"]
else:
    done = compare_runs(store, base, cand)
seconds = time.perf_counter() - started
cpu = time.process_time() - cpu
peak = 0.0
with open("/proc/self/status") as status:
    for line in status:
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_mb": peak}))
"""

_SAMPLE_COLUMNS = (
    "run_id, sample_id, idx, input, expected, prediction, metadata, error, passed, latency_s,"
    " input_tokens, output_tokens, cost, retries, cached, extra, created_at, verdict,"
    " weighted_score, verdict_passed, verdict_plain, grade, epoch, verdict_values,"
    " promotion_score"
)
_VALUE_COLUMNS = "run_id, sample_id, ord, kind, name, value, floor, flag"


def _statements(skill: int) -> list[str]:
    """``INSERT ... SELECT`` statements of one run's samples, scores and ``sample_values``, from
    a row number ``i`` (``{rows}``; a hash of it stands for chance, the same on both backends).
    Every figure's text in the verdict equals its typed value."""
    h = f"((i * 2654435761 + {skill}) % 1000003)"
    acc = f"(({h} % 1000) / 1000.0)"  # the accuracy criterion (floor 0.2) and scorer
    style = f"((({h} / 1000) % 100) / 100.0)"
    weighted = f"((({h} + {skill} * 40) % 1000) / 10.0)"
    gate = f"({h} % 50 <> 0)"
    passed = f"(CASE WHEN {gate} AND {acc} >= 0.2 AND {weighted} >= 50 THEN 1 ELSE 0 END)"
    grade = (
        f"(CASE WHEN NOT {gate} THEN 'F' WHEN {weighted} >= 85 THEN 'A' WHEN {weighted} >= 70"
        f" THEN 'B' WHEN {weighted} >= 55 THEN 'C' ELSE 'D' END)"
    )
    workflow = "(CASE WHEN i % 3 = 0 THEN 'escalation' ELSE 'support' END)"
    flag = "(CASE WHEN {0} THEN 1 ELSE 0 END)"
    boolean = "(CASE WHEN {0} THEN 'true' ELSE 'false' END)"
    coverage = (
        'CASE WHEN i % 4 = 0 THEN \', "score_coverage": {"share": 0.75, "unscored":'
        " [\"tone\"]}' ELSE '' END"
    )
    verdict = (
        f"'{{\"passed\": ' || {boolean.format(f'{passed} = 1')} || ', \"reasons\": '"
        f' || CASE WHEN {passed} = 1 THEN \'[]\' ELSE \'[{{"kind": "threshold", "key":'
        ' "weighted_score", "text": "weighted score below 50"}]\' END'
        f' || \', "weighted_score": \' || {weighted} || \', "grade": "\' || {grade}'
        f' || \'", "gates": [{{"name": "schema", "passed": \' || {boolean.format(gate)}'
        ' || \', "reason": null}], "criteria": {"accuracy": {"normalized": \''
        f' || {acc} || \', "weight": 2.0, "floor": 0.2, "floor_passed": \''
        f' || {boolean.format(f"{acc} >= 0.2")} || \'}}, "style": {{"normalized": \''
        f' || {style} || \', "weight": 1.0}}}}, "grader": "workflow", "workflow":'
        f' {{"workflow": "\' || {workflow} || \'"\' || {coverage} || \', "agents":'
        ' {"planner": {"steps": \' || (1 + i % 3) || \', "duration_s": \' || ((i % 7) * 0.5)'
        ' || \', "tokens": \' || (100 + i % 50) || \'}, "writer": {"steps": 2, "retries": \''
        " || (i % 2) || '}}}}'"
    )
    sample = (
        f"?, 's' || i, i, '{{\"q\": \"question\"}}', '\"answer\"', 'prediction',"
        f" '{{\"topic\": \"t' || (i % 7) || '\"}}', NULL, {passed}, 0.05 + {acc} * 2, 20, 5,"
        f" NULL, 0, 0, NULL, 0.0, {verdict}, {weighted}, {passed}, 0, {grade}, NULL, 2,"
        f" {weighted}"
    )
    values = [
        f"?, 's' || i, 0, 'gate', 'schema', NULL, NULL, {flag.format(gate)}",
        f"?, 's' || i, 1, 'criterion', 'accuracy', {acc}, 0.2, {flag.format(f'{acc} >= 0.2')}",
        f"?, 's' || i, 2, 'criterion', 'style', {style}, NULL, NULL",
        f"?, 's' || i, 3, 'workflow', {workflow}, NULL, NULL, NULL",
        "?, 's' || i, 4, 'agent', 'planner', NULL, NULL, 1 + i % 3",
        "?, 's' || i, 5, 'agent_duration', 'planner', (i % 7) * 0.5, NULL, NULL",
        "?, 's' || i, 6, 'agent_tokens', 'planner', 100 + i % 50, NULL, NULL",
        "?, 's' || i, 7, 'agent', 'writer', NULL, NULL, 2",
    ]
    into = f"INSERT INTO sample_values ({_VALUE_COLUMNS}) SELECT"
    return [
        f"INSERT INTO samples ({_SAMPLE_COLUMNS}) SELECT {sample} FROM {{rows}}",
        *(f"{into} {v} FROM {{rows}}" for v in values),
        f"{into} ?, 's' || i, 4, 'coverage', '', 0.75, NULL, NULL FROM {{rows}} WHERE i % 4 = 0",
        f"{into} ?, 's' || i, 5, 'unscored', 'tone', 1.0, NULL, NULL FROM {{rows}} WHERE i % 4 = 0",
        f"{into} ?, 's' || i, 9, 'agent_retries', 'writer', NULL, NULL, 1 FROM {{rows}}"
        " WHERE i % 2 = 1",
        f"INSERT INTO scores (run_id, sample_id, scorer, value) SELECT ?, 's' || i, 'accuracy',"
        f" {acc} FROM {{rows}}",
        f"INSERT INTO scores (run_id, sample_id, scorer, value) SELECT ?, 's' || i, 'style',"
        f" {style} FROM {{rows}}",
    ]


def generate_runs(location: str, n: int) -> dict[str, str]:
    """Two graded workflow runs of ``n`` samples each, written by the database itself."""
    from aieval import Store

    with Store(location) as store:
        ids = {
            name: store.create_run(name=name, n_examples=n, config={"workflow": {"id": "wf"}})
            for name in ("baseline", "candidate")
        }
        for run_id in ids.values():
            store.finish_run(run_id, status="completed")
        postgres = store.location.backend == "postgres"
    for name, skill in (("baseline", 70), ("candidate", 72)):
        started = time.perf_counter()
        statements = _statements(skill)
        if postgres:
            import psycopg

            with psycopg.connect(location, autocommit=True) as conn:
                for sql in statements:
                    rows = "generate_series(0, %s) AS g(i)"
                    sql = sql.replace("%", "%%").replace("?", "%s").replace("{rows}", rows)
                    conn.execute(sql, (ids[name], n - 1))
                # written by SQL, not by the writer: no rollups (the first report keeps them)
                conn.execute("DELETE FROM run_totals")
                conn.execute("ANALYZE")
        else:
            import sqlite3

            with sqlite3.connect(location) as conn:
                for sql in statements:
                    rows = "(WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq"
                    rows += " WHERE i < ?) SELECT i FROM seq)"
                    conn.execute(sql.replace("{rows}", rows), (ids[name], n - 1))
                conn.execute("DELETE FROM run_totals")
                conn.execute("ANALYZE")
        print(f"  generated the {name} run of {n} samples in {time.perf_counter() - started:.1f} s")
    return ids


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3])


def _server_cpu(postmaster: int | None) -> float | None:
    """CPU seconds this bench's PostgreSQL server has used so far: the postmaster, its live
    children and those it reaped (a step's session ends with it); ``None`` on SQLite."""
    if postmaster is None:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    try:
        children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
    except OSError:
        children = []
    total = 0.0
    for pid in [postmaster, *(int(c) for c in children)]:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:13]) / tick
        if pid == postmaster:
            total += sum(int(f) for f in fields[13:15]) / tick
    return total


def run(
    n: int, backend: str, location: str, before: Path | None, postmaster: int | None = None
) -> dict[str, dict[str, float]]:
    ids = generate_runs(location, n)
    figures: dict[str, dict[str, float]] = {}
    for what in STEPS:
        env = dict(os.environ)
        if what == "report_before":
            if before is None:
                continue
            env["PYTHONPATH"] = str(before)
        server = _server_cpu(postmaster)
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, what.removesuffix("_before"), location,
             ids["baseline"], ids["candidate"]],
            capture_output=True, text=True, check=False, env=env,
        )  # fmt: skip
        if done.returncode:
            raise SystemExit(f"{what} failed:\n{done.stderr}")
        f = json.loads(done.stdout.strip().splitlines()[-1])
        after = _server_cpu(postmaster)
        if server is not None and after is not None:
            f["server_cpu"] = after - server
        figures[what] = f
        extra = f"  server CPU {f['server_cpu']:6.2f} s" if "server_cpu" in f else ""
        print(
            f"  {backend:8s} {what:13s} {f['seconds']:7.2f} s (CPU {f['cpu']:6.2f} s){extra}"
            f"  peak {f['peak_mb']:6.0f} MB  (load {_load()})"
        )
    new = figures["report"]
    for name in ("report_record", "report_before"):
        if name in figures:
            old = figures[name]
            print(
                f"  {backend:8s} report from sums: {old['seconds'] / new['seconds']:.1f}x less"
                f" wall time, {old['cpu'] / new['cpu']:.1f}x less CPU than {name}"
            )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--backends", nargs="+", choices=["sqlite", "postgres"], default=["sqlite"])
    parser.add_argument(
        "--before",
        default=BEFORE_REV,
        help="git revision whose build_report is timed too ('none': do not)",
    )
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; load {_load()}")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from report import _postgres, export_source  # the bench's temporary server, old code

    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as servers:
        before = None if args.before == "none" else export_source(args.before, Path(tmp) / "old")
        for n in args.sizes:
            print(f"graded runs of {n} samples:")
            for backend in args.backends:
                location, postmaster = str(Path(tmp) / f"graded-{n}.db"), None
                if backend == "postgres":
                    location = _postgres(servers)
                    folder = _postgres.server.folder  # type: ignore[attr-defined]
                    postmaster = int((folder / "data" / "postmaster.pid").read_text().split()[0])
                run(n, backend, location, before, postmaster)
                if backend == "sqlite":
                    Path(location).unlink()


if __name__ == "__main__":
    main()
