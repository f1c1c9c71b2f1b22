"""Opening a run cold in real Chromium: rows before the report, searches wait for the index.

The report builder and the sample indexer are held on events, so "still building" is a state
the test controls, not a race it hopes to win.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.browser import ARTIFACTS, PageWatch, require_chromium

require_chromium()

import httpx  # noqa: E402
from tests.support.server import LiveServer  # noqa: E402
from tests.support.viewer_data import NEEDLE, store_qa_run  # noqa: E402

import aieval.server as server_api  # noqa: E402
from aieval.server import _reports  # noqa: E402
from aieval.server._table import SampleIndex  # noqa: E402

N_SAMPLES = 300


class Cold:
    """A live server over one stored run whose report and index wait for the test."""

    def __init__(self, url: str, run_id: str, client: httpx.Client) -> None:
        self.url, self.run_id, self.client = url, run_id, client
        self.report = threading.Event()
        self.index = threading.Event()
        self.reports_started = threading.Event()


@pytest.fixture
def cold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cold]:
    db = tmp_path / "runs.db"
    run_id = store_qa_run(db, N_SAMPLES, seed=3, skill=0.6)
    app = server_api.create_app(db, server_api.ServerSettings(dataset_roots=(tmp_path,)))
    build_report, build_index = _reports.report_bundle, SampleIndex._build
    with LiveServer(app) as live, httpx.Client(base_url=live.url, timeout=30) as client:
        state = Cold(live.url, run_id, client)

        def slow_report(store: Any, run: str) -> dict[str, Any]:
            state.reports_started.set()
            if not state.report.wait(60):
                raise TimeoutError("the test never released the report")
            return build_report(store, run)

        def slow_index(index: SampleIndex, *args: Any) -> None:
            state.index.wait(60)
            build_index(index, *args)

        monkeypatch.setattr(_reports, "report_bundle", slow_report)
        monkeypatch.setattr(SampleIndex, "_build", slow_index)
        try:
            yield state
        finally:
            state.report.set()
            state.index.set()
            app.state.manager.shutdown()


@pytest.fixture
def page_watch() -> PageWatch:
    """Uncaught script errors fail a test here; console messages do not."""
    return PageWatch(console=False)


def _count_text(page: Any) -> str:
    text: str = page.locator("#sample-count").inner_text()
    return text


def _table_top(page: Any) -> float:
    box = page.locator("#run-samples").bounding_box()
    assert box is not None
    return float(box["y"])


def test_rows_show_while_the_report_is_still_built(page: Any, cold: Cold) -> None:
    page.goto(f"{cold.url}/#/runs/{cold.run_id}")
    page.wait_for_selector("#run-samples tbody tr[data-sample]")
    assert cold.reports_started.wait(10) and not cold.report.is_set()
    assert page.locator("#run-samples tbody tr[data-sample]").count() == 50
    first = cold.client.get(f"/api/runs/{cold.run_id}/samples", params={"limit": 1}).json()
    assert first["indexed"] is False  # the index is held too: the page came from the store
    shown = page.locator("#run-samples tbody tr[data-sample]").first
    assert shown.get_attribute("data-sample") == first["samples"][0]["id"]
    state = page.locator("#report-state")
    assert state.inner_text() == f"Building the report over {N_SAMPLES} samples…"
    assert state.get_attribute("aria-busy") == "true"
    assert page.locator("#kpis").count() == 0 and page.locator("#kpis-pending").is_visible()
    assert page.locator("#run-status").inner_text() == "completed"  # the header came at once
    assert page.get_attribute("main", "aria-busy") == "true"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "viewer-report-building.png"))
    top = _table_top(page)

    cold.report.set()
    page.wait_for_selector("#kpis")
    page.wait_for_selector("main[aria-busy=false]")
    assert page.locator("#report-state").inner_text() == f"Report over {N_SAMPLES} samples."
    assert page.locator("#kpis-pending").count() == 0
    assert _table_top(page) == top, "the table moved when the report came in"
    assert page.locator("#run-report #s-latency-tokens-and-cost").count() == 1


def test_a_search_waits_for_the_index_and_says_so(page: Any, cold: Cold) -> None:
    cold.report.set()
    page.goto(f"{cold.url}/#/runs/{cold.run_id}")
    page.wait_for_selector("#run-samples tbody tr[data-sample]")
    page.wait_for_function(
        "t => document.getElementById('sample-count').textContent.includes(t)",
        arg=f"indexing {N_SAMPLES} samples",
    )
    assert _count_text(page) == (
        f"1–50 of {N_SAMPLES} samples · indexing {N_SAMPLES} samples for search, filters and sorts"
    )

    page.fill("#sample-search", NEEDLE)
    pending = page.locator("#sample-indexing")
    pending.wait_for()
    # the unfiltered rows are gone: nothing on the page passes for the search's answer
    assert page.locator("#run-samples tbody tr[data-sample]").count() == 0
    assert f"Indexing {N_SAMPLES} samples" in pending.inner_text()
    assert _count_text(page) == f"Indexing {N_SAMPLES} samples…"
    assert page.locator("#sample-next").is_hidden()

    cold.index.set()
    expected = cold.client.get(f"/api/runs/{cold.run_id}/samples", params={"q": NEEDLE}).json()
    assert expected["indexed"] is True and expected["total"] > 0
    want = f"1–{expected['total']} of {expected['total']} matching samples (of {N_SAMPLES})"
    page.wait_for_function(
        "t => document.getElementById('sample-count').textContent === t", arg=want
    )
    shown = page.locator("#run-samples tbody tr[data-sample]")
    assert shown.evaluate_all("rows => rows.map(r => r.dataset.sample)") == [
        s["id"] for s in expected["samples"]
    ]
    assert page.locator("#sample-indexing").count() == 0

    page.fill("#sample-search", "")
    page.wait_for_function(
        "t => document.getElementById('sample-count').textContent === t",
        arg=f"1–50 of {N_SAMPLES} samples",
    )
