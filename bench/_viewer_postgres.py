"""The PostgreSQL half of ``bench/viewer.py``: a team store of many runs made in the
database, its indexes built by opening it, each viewer request timed (p50/p95), then Chromium.
"""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import psycopg
from tests.support.postgres import find_binaries, postgres_server
from tests.support.server import LiveServer

import aieval.server as server_api
from aieval._records import SampleRecord
from aieval.core._threshold import threshold_verdict
from aieval.store import Store
from aieval.store._schema import POSTGRES_TABLE_INDEXES, TRIGRAM_INDEX

BUDGET_S = 0.300
MEMORY_MB = 500
_SCORERS = [{"name": n, "options": {}} for n in ("exact_match", "token_f1")]
_WORDS = "ARRAY['refund', 'order', 'window', 'shipping', 'invoice', 'account', 'password']"

# each sample: a question (a word of _WORDS, "zanzibar" in every 97th), an answer, a topic, a
# verdict (a failed one fails a gate), a weighted score; texts kept short (disk: 10M rows)
_SAMPLES = f"""
INSERT INTO samples (run_id, sample_id, idx, input, expected, prediction, metadata, error,
                     passed, created_at, verdict, weighted_score, verdict_passed, verdict_plain)
SELECT r.id, 's' || lpad(i::text, 7, '0'), i,
       to_json('q' || i || ' my ' || ({_WORDS})[i %% 7 + 1] || ' of ' || (i * 7919 %% 1000)
               || CASE WHEN i %% 97 = 0 THEN ' zanzibar' ELSE '' END)::text,
       '"yes ' || (i %% 5) || '"', 'yes ' || (i * 31 %% 7),
       '{{"topic": "' || (ARRAY['billing', 'shipping', 'accounts', 'login'])[i %% 4 + 1] || '"}}',
       CASE WHEN i %% 211 = 0 THEN 'target failed: timeout' END,
       (i * 31 %% 7 = i %% 5)::int, 0,
       CASE WHEN i * 31 %% 7 = i %% 5 THEN %(passed)s ELSE %(failed)s END,
       (i * 31 %% 7 = i %% 5)::int * 100.0, (i * 31 %% 7 = i %% 5)::int, 0
FROM (SELECT id FROM runs ORDER BY id) AS r CROSS JOIN generate_series(0, %(n)s - 1) AS i
"""
_SCORES = """
INSERT INTO scores (run_id, sample_id, scorer, value)
SELECT s.run_id, s.sample_id, k.name,
       CASE k.name WHEN 'exact_match' THEN s.passed::float8
       ELSE round(((s.idx * 7919) % 1000) / 1000.0, 3)::float8 END
FROM samples s CROSS JOIN (VALUES ('exact_match'), ('token_f1')) AS k(name)
"""

#: the requests timed, as the pages send them: (name, path, params); a table page asks
#: ``count=fast`` as the viewer does
_FAST = {"count": "fast"}
_ASKED: list[tuple[str, str, dict[str, Any]]] = [
    ("runs list", "/api/runs", {"limit": 50}),
    ("run header", "/api/runs/{run}/header", {}),
    ("first rows", "/api/runs/{run}/samples", _FAST),
    ("next page (token)", "/api/runs/{run}/samples", {"next": True, **_FAST}),
    ("sort by a score", "/api/runs/{run}/samples",
     {"sort": "score:token_f1", "order": "desc", **_FAST}),
    ("filter failed", "/api/runs/{run}/samples", {"filter": "failed", **_FAST}),
    ("filter errors", "/api/runs/{run}/samples", {"filter": "error", **_FAST}),
    ("filter metadata value", "/api/runs/{run}/samples", {"meta": "topic=billing", **_FAST}),
    ("search a rare word", "/api/runs/{run}/samples", {"q": "zanzibar", **_FAST}),
    ("search a common word", "/api/runs/{run}/samples", {"q": "refund", **_FAST}),
    ("failed, by score, searched", "/api/runs/{run}/samples",
     {"filter": "failed", "sort": "score:token_f1", "q": "invoice", **_FAST}),
    ("sample page", "/api/runs/{run}/sample", {"id": "s0000042"}),
]  # fmt: skip
#: the first looks whose count came as a lower bound: the viewer then asks the exact count
#: (timed as "... exact count after"); ``--before`` also times the old first look (the page
#: with its exact count, the run's kept counts dropped first)
_BOUNDED = (
    "filter errors",
    "filter metadata value",
    "search a rare word",
    "search a common word",
    "failed, by score, searched",
)


def _verdict(passed: bool) -> str:
    from aieval.core import GateOutcome

    sample = SampleRecord(id="x", index=0, input="", passed=passed)
    made = threshold_verdict(sample, 0.5, passed=passed)
    if not passed:
        made = dataclasses.replace(made, gates=(GateOutcome("no_pii", False, None),))
    return json.dumps(made.to_dict())


def _uptime() -> str:
    done = subprocess.run(["uptime"], capture_output=True, text=True)
    return done.stdout.strip().split("load average:")[-1].strip()


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _make(url: str, n: int, runs: int) -> list[str]:
    """The runs, then their samples and scores made in the database; the store then opened as
    one of schema 8, so opening it builds the table's indexes (timed)."""
    with Store(url) as store:
        ids = [
            store.create_run(name=f"nightly-{k % 10}", config={"scorers": _SCORERS})
            for k in range(runs)
        ]
    per_run = n // runs
    dropped = [*__import__("re").findall(r"EXISTS (\w+)", POSTGRES_TABLE_INDEXES), TRIGRAM_INDEX]
    with psycopg.connect(url, autocommit=True) as conn:
        for name in dropped:  # made as an older store's rows are: without the new indexes
            conn.execute(f"DROP INDEX IF EXISTS {name}")
        started = time.perf_counter()
        conn.execute(_SAMPLES, {"passed": _verdict(True), "failed": _verdict(False), "n": per_run})
        conn.execute(_SCORES)
        made = time.perf_counter() - started
        conn.execute("UPDATE runs SET status = 'completed'")
        conn.execute("DELETE FROM run_totals")  # written by SQL, not the writer: no rollups
        conn.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
        size = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))")
        print(f"made {per_run * runs:,} samples in {runs} runs in the database: {made:.0f} s")
    started = time.perf_counter()
    Store(url).close()  # migrates: builds the table's indexes
    print(
        f"opening it as a schema 8 store built the indexes: {time.perf_counter() - started:.0f} s"
    )
    with psycopg.connect(url, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute("VACUUM ANALYZE")
        print(f"VACUUM ANALYZE: {time.perf_counter() - started:.0f} s")
        size = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))")
        print(f"database size: {size.fetchone()[0]}")  # type: ignore[index]
    return ids


def _server_cpu(folder: Path) -> float:
    """CPU seconds of the PostgreSQL server: the postmaster, its live children and the
    children it has reaped (a closed connection's backend)."""
    tick = os.sysconf("SC_CLK_TCK")
    postmaster = int((folder / "data" / "postmaster.pid").read_text().split()[0])
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(stat.parent.name), int(fields[1])
        if pid == postmaster:  # utime stime cutime cstime
            total += sum(int(v) for v in fields[11:15]) / tick
        elif ppid == postmaster:
            total += sum(int(v) for v in fields[11:13]) / tick
    return total


def _forget_counts(queries: Any) -> None:
    """Drop the kept counts of filtered answers (a first look counts again); the runs' own
    counts, scorer names and metadata keys stay kept, as a page that was open keeps them."""
    with queries._lock:
        for key in [k for k in queries._kept if k[0] in _COUNTS and k[3] != ""]:
            del queries._kept[key]


_COUNTS = ("count", "prefix", "valued")


def _server_times(
    url: str, runs: list[str], repeat: int, forget: Callable[[], None], before: bool
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    with httpx.Client(base_url=url, timeout=600) as client:

        def get(name: str, path: str, params: dict[str, Any]) -> dict[str, Any]:
            started = time.perf_counter()
            response = client.get(path, params=params)
            took = time.perf_counter() - started
            response.raise_for_status()
            times.setdefault(name, []).append(took)
            body: dict[str, Any] = response.json()
            return body

        for attempt in range(repeat):
            run = runs[(attempt * 7) % len(runs)]  # another run each try: its first look
            forget()  # a run seen before (fewer runs than tries): a first look again
            token = None
            for name, path, params in _ASKED:
                asked = dict(params)
                if asked.pop("next", False):
                    asked["after"] = token
                body = get(name, path.replace("{run}", run), asked)
                if name == "first rows":
                    token = body["next"]
                if "samples" in body and isinstance(body["samples"], list):
                    assert body["samples"], name
                if name.startswith("search"):
                    times.setdefault("(search ran by)", []).append(body["search"] == "trigram")
                if name in _BOUNDED:
                    times.setdefault("(first looks bounded)", []).append(not body["count"]["exact"])
                    exact = {**asked, "count": "exact", "limit": 1}
                    counted = get(f"{name}: exact count after", path.replace("{run}", run), exact)
                    assert (
                        counted["count"]["exact"]
                        and counted["count"]["value"] >= (body["count"]["value"])
                    )
                    if before:
                        forget()
                        old = {**asked, "count": "exact"}
                        get(f"{name}: before (exact count)", path.replace("{run}", run), old)
    return times


def main(
    n: int,
    runs: int,
    repeat: int,
    browser_times: Callable[[str, str, int, int], dict[str, list[float]]],
    queries: dict[str, dict[str, Any]],
    before: bool = False,
) -> None:
    del queries
    binaries = find_binaries()
    if binaries is None:
        raise SystemExit("PostgreSQL server binaries (initdb, pg_ctl) not installed")
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"load before: {load}")
    with postgres_server(binaries) as pg:
        url = pg.create_database()
        run_ids = _make(url, n, runs)
        with tempfile.TemporaryDirectory() as folder:
            settings = server_api.ServerSettings(dataset_roots=(Path(folder),))
            app = server_api.create_app(url, settings)
            rss_before = _rss_mb()
            forget = partial(_forget_counts, app.state.table_queries)
            with LiveServer(app) as live:
                cpu, pg_cpu = time.process_time(), _server_cpu(pg.folder)
                timed_load = _uptime()
                server = _server_times(live.url, run_ids, repeat, forget, before)
                cpu, pg_cpu = time.process_time() - cpu, _server_cpu(pg.folder) - pg_cpu
                timed_load += " / " + _uptime()
                rss = _rss_mb()
                forget()
                browser = browser_times(live.url, run_ids[3], n // runs, 3)
            app.state.manager.shutdown()
        pg.drop_database(url)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"load after: {load}")
    trigram = server.pop("(search ran by)")
    bounded = server.pop("(first looks bounded)")
    print(f"\nviewer, {n:,} samples in {runs} runs of {n // runs:,} (PostgreSQL)")
    print(f"search by the trigram index: {all(trigram)}")
    print(f"first looks answered with a bounded count: {sum(bounded)} of {len(bounded)}")
    print(f"load while timing the requests: {timed_load}")
    print(
        f"CPU while timing: this process (server and client) {cpu:.1f} s, PostgreSQL {pg_cpu:.1f} s"
    )
    print(f"process memory: {rss_before:.0f} MB before serving, {rss:.0f} MB after")
    print(f"  (budget {MEMORY_MB} MB: {rss / MEMORY_MB:.2f}x)")
    print(f"server, HTTP request, {repeat} tries each on another run: p50, p95, ratio to 300 ms")
    for name, values in server.items():
        p50, p95 = statistics.median(values), _p95(values)
        line = f"  {name:<52} {p50:7.3f} s {p95:7.3f} s   {p95 / BUDGET_S:5.2f}x"
        old = server.get(f"{name}: before (exact count)")
        if old:  # the old first look's p95 over this one's
            line += f"   before/now p95 {_p95(old) / p95:5.1f}x"
        print(line)
    print("Chromium 1280x800, action to rows shown (median of 3)")
    for name, values in browser.items():
        print(f"  {name:<40} {statistics.median(values):7.3f} s")
