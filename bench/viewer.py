"""Viewer benchmark: a run of a million samples in real Chromium (first rows, sort by a score,
filter by pass/fail and by a metadata value, full-text search), against a budget of 1 s each.

Usage::

    python bench/viewer.py                      # 1,000,000 samples
    python bench/viewer.py --samples 100000 --repeat 5
    python bench/viewer.py --backend postgres --samples 10000000 --runs 100

``--backend postgres`` starts a private PostgreSQL server (initdb and pg_ctl, as the tests
do), makes ``--runs`` runs of ``--samples / --runs`` samples each IN the database (``INSERT ...
SELECT generate_series``: texts, metadata, a verdict, two scores per sample), then opens the
store as an older one (schema 8) so that opening it builds the table's indexes, as an existing
team store gets them, and times that. The server answers the table in SQL: each request
(runs list, a run's table in each state and its next page by token, a sample's page) is timed
on a different run each try (p50 and p95; counts are kept per run, so a first look at each
run is in the figures), with the whole process's resident memory, then the same Chromium
actions. The target is p95 <= 300 ms per request and <= 500 MB.

A QA run (exact_match and token_f1 values, a pass flag, metadata, a needle word in every 97th
input) is written straight to a temp SQLite file with the store's batched writes, then served
by uvicorn on 127.0.0.1. The script times, in one run:

- the server alone: the index build (the first search, filter or sort waits for it) and the
  run's report (the page shows it above the table; both are built once and kept), then each
  table request over HTTP;
- Debian's Chromium at 1280x800 through Playwright: wall time from the action (opening the
  run's page, clicking a sort header or a filter, typing a search or a metadata filter) to
  the table showing the answer's rows and count. The search box waits 250 ms after the last
  key before it asks (so a search costs one request, not one per key): that wait is in the
  figure.

Each figure is the median of ``--repeat`` tries; the ratio is to the 1 s budget (below 1 is
within it). No peer is timed: inspect_ai's log viewer needs hours to load 200,000 samples
(inspect_ai #2873) and promptfoo's runs out of memory near 100,000 results (promptfoo #7471).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
from tests.support.server import LiveServer
from tests.support.viewer_data import NEEDLE, store_qa_samples

import aieval.server as server_api

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BUDGET_S = 1.0
#: the table requests timed over HTTP (as the page sends them), by name
QUERIES: dict[str, dict[str, Any]] = {
    "first rows": {},
    "sort by a score": {"sort": "score:token_f1", "order": "desc"},
    "filter failed": {"filter": "failed"},
    "filter metadata value": {"meta": "topic=billing"},
    "search": {"q": NEEDLE},
    "search a common word": {"q": "refund"},
    "last page": {"offset": -50},
}


def _rss_mb() -> float:
    """This process's resident memory (MB): the server runs in it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _median(values: list[float]) -> float:
    return statistics.median(values)


def server_times(url: str, run_id: str, n: int, repeat: int) -> dict[str, list[float]]:
    """The index build, then each table request with the index built."""
    times: dict[str, list[float]] = {}
    with httpx.Client(base_url=url, timeout=600) as client:
        path = f"/api/runs/{run_id}/samples"
        started = time.perf_counter()
        response = client.get(path, params={"sort": "score:token_f1", "limit": 50})
        response.raise_for_status()
        times["index build"] = [time.perf_counter() - started]
        times["memory"] = [_rss_mb()]
        # the page shows the run's report too: built (and kept) once, like the index
        started = time.perf_counter()
        client.get(f"/api/runs/{run_id}").raise_for_status()
        times["report build"] = [time.perf_counter() - started]
        for _ in range(repeat):
            for name, params in QUERIES.items():
                asked = {"limit": 50, **params}
                if asked.get("offset") == -50:
                    asked["offset"] = n - 50
                started = time.perf_counter()
                response = client.get(path, params=asked)
                response.raise_for_status()
                times.setdefault(name, []).append(time.perf_counter() - started)
                assert response.json()["indexed"] is True
    return times


def _totals(url: str, run_id: str) -> dict[str, int]:
    with httpx.Client(base_url=url, timeout=600) as client:
        path = f"/api/runs/{run_id}/samples"
        return {
            name: int(client.get(path, params={"limit": 1, **params}).json()["total"])
            for name, params in QUERIES.items()
            if "offset" not in params
        }


def browser_times(url: str, run_id: str, n: int, repeat: int) -> dict[str, list[float]]:
    """Action to rows shown in Chromium, each from the run's page in its first state."""
    from playwright.sync_api import sync_playwright

    totals = _totals(url, run_id)
    times: dict[str, list[float]] = {}

    def count(page: Any, text: str) -> None:
        page.wait_for_function(
            "t => (document.getElementById('sample-count') || {textContent: ''}).textContent"
            ".includes(t) && document.querySelectorAll('#sample-rows tr[data-sample]').length",
            arg=text,
            timeout=600_000,
        )

    def timed(name: str, action: Callable[[], None]) -> None:
        started = time.perf_counter()
        action()
        times.setdefault(name, []).append(time.perf_counter() - started)

    def matching(name: str) -> str:
        return f"of {totals[name]} matching samples"

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(repeat):
            page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            everything = f"of {n} samples"

            def first(page: Any = page, everything: str = everything) -> None:
                page.goto(f"{url}/#/runs/{run_id}")
                count(page, everything)

            timed("first rows", first)
            # the report (built and kept before) is drawn after the rows: time what follows
            # once the page is still
            page.wait_for_selector("#kpis", timeout=600_000)

            def sort(page: Any = page) -> None:
                page.locator("th[data-sort='score:token_f1'] button").click()
                page.wait_for_selector(
                    "th[data-sort='score:token_f1'][aria-sort=ascending]", timeout=600_000
                )

            timed("sort by a score", sort)
            page.locator("th[data-sort='index'] button").click()
            page.wait_for_selector("th[data-sort='index'][aria-sort=ascending]")

            def failed(page: Any = page) -> None:
                page.click("button[data-filter='failed']")
                count(page, matching("filter failed"))

            timed("filter failed", failed)
            page.click("button[data-filter='all']")
            count(page, everything)

            started = time.perf_counter()
            page.fill("#meta-filter", "topic=billing")
            page.locator("#meta-filter").dispatch_event("change")
            # the rows come with a first count (a lower bound on a large PostgreSQL run),
            # then the exact count replaces it
            count(page, "matching samples")
            times.setdefault("filter metadata value (rows, first count)", []).append(
                time.perf_counter() - started
            )
            count(page, matching("filter metadata value"))
            times.setdefault("filter metadata value (exact count shown)", []).append(
                time.perf_counter() - started
            )
            page.fill("#meta-filter", "")
            page.locator("#meta-filter").dispatch_event("change")
            count(page, everything)

            def search(page: Any = page) -> None:
                page.fill("#sample-search", NEEDLE)
                count(page, matching("search"))

            timed("search (with the 250 ms typing wait)", search)
            page.context.close()
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--runs", type=int, default=100, help="runs (postgres)")
    parser.add_argument(
        "--before",
        action="store_true",
        help="postgres: also time the old first look of each filter whose count is bounded"
        " (the page with its exact count), for the ratio",
    )
    args = parser.parse_args()
    n = args.samples
    if args.backend == "postgres":
        from bench._viewer_postgres import main as postgres_main

        postgres_main(n, args.runs, max(args.repeat, 20), browser_times, QUERIES, args.before)
        return
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "runs.db"
        started = time.perf_counter()
        run_id = store_qa_samples(db, n, seed=1, skill=0.6)
        print(f"stored {n:,} samples in {time.perf_counter() - started:.1f} s (batched writes)")
        settings = server_api.ServerSettings(dataset_roots=(Path(folder),))
        app = server_api.create_app(db, settings)
        with LiveServer(app) as live:
            server = server_times(live.url, run_id, n, args.repeat)
            browser = browser_times(live.url, run_id, n, args.repeat)
        app.state.manager.shutdown()
    print(f"\nviewer, {n:,}-sample run (median of tries; ratio to the {BUDGET_S:.0f} s budget)")
    print(f"  {'index build (once per run)':<40} {_median(server.pop('index build')):7.2f} s")
    print(f"  {'report build (once per run)':<40} {_median(server.pop('report build')):7.2f} s")
    print(f"  {'memory with the index (whole process)':<40} {server.pop('memory')[0]:7.0f} MB")
    print("server, HTTP request with the index built")
    for name, values in server.items():
        value = _median(values)
        print(f"  {name:<40} {value:7.3f} s   {value / BUDGET_S:5.2f}x")
    print("Chromium 1280x800, action to rows shown")
    for name, values in browser.items():
        value = _median(values)
        print(f"  {name:<40} {value:7.3f} s   {value / BUDGET_S:5.2f}x")


if __name__ == "__main__":
    main()
