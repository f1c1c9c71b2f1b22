"""Viewer benchmark: a run of 100,000 samples in real Chromium (time to first render, to search,
to filter by a score range, to sort by a scorer).

Usage::

    python bench/viewer.py                 # 100,000 samples
    python bench/viewer.py --samples 20000

A QA run of recorded predictions (exact_match, token_f1) is stored with ``aieval.run`` in a temp
SQLite file and served by uvicorn on 127.0.0.1; Debian's Chromium opens it at 1280x800 through
Playwright. Each figure is the median of ``--repeat`` tries, wall time from the action to the
table showing its result. The first render is timed cold (the server has neither indexed the
run nor built its report: the first page comes straight from SQLite while both are built in
the background) and warm; "report shown" is the time from opening the page to the report's key
figures.
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

from tests.support.server import LiveServer
from tests.support.viewer_data import NEEDLE, store_qa_run

import aieval.server as server_api

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def _count(page: Any, text: str) -> None:
    page.wait_for_function(
        "t => (document.getElementById('sample-count') || {textContent: ''}).textContent"
        ".includes(t)",
        arg=text,
        timeout=120_000,
    )


def _timed(action: Callable[[], None]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def measure(url: str, run_id: str, n: int, repeat: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for attempt in range(repeat):
            page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            cold = attempt == 0
            started = time.perf_counter()
            page.goto(f"{url}/#/runs/{run_id}")
            _count(page, f"of {n} samples")
            key = "first render (cold)" if cold else "first render (warm)"
            times.setdefault(key, []).append(time.perf_counter() - started)
            page.wait_for_selector("#kpis", timeout=120_000)
            key = "report shown (cold)" if cold else "report shown (warm)"
            times.setdefault(key, []).append(time.perf_counter() - started)

            def search(page: Any = page) -> None:
                page.fill("#sample-search", NEEDLE)
                _count(page, "matching samples")

            times.setdefault("search", []).append(_timed(search))
            page.fill("#sample-search", "")
            _count(page, f"of {n} samples")

            def score_range(page: Any = page) -> None:
                page.select_option("#range-scorer", "token_f1")
                page.fill("#range-min", "0.2")
                page.fill("#range-max", "0.6")
                page.locator("#range-max").dispatch_event("change")
                _count(page, "matching samples")

            times.setdefault("filter by score range", []).append(_timed(score_range))

            def sort(page: Any = page) -> None:
                page.locator("th[data-sort='score:token_f1'] button").click()
                page.wait_for_selector(
                    "th[data-sort='score:token_f1'][aria-sort=ascending]", timeout=120_000
                )

            times.setdefault("sort by a scorer", []).append(_timed(sort))
            page.context.close()
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "runs.db"
        started = time.perf_counter()
        run_id = store_qa_run(db, args.samples, seed=1, skill=0.6)
        print(f"stored {args.samples:,} samples in {time.perf_counter() - started:.1f} s")
        settings = server_api.ServerSettings(dataset_roots=(Path(folder),))
        app = server_api.create_app(db, settings)
        with LiveServer(app) as live:
            times = measure(live.url, run_id, args.samples, args.repeat)
        app.state.manager.shutdown()
    print(f"\nviewer, {args.samples:,}-sample run, Chromium 1280x800 (median of tries)")
    for name, values in times.items():
        print(f"  {name:<28} {statistics.median(values):7.2f} s   ({len(values)} tries)")


if __name__ == "__main__":
    main()
