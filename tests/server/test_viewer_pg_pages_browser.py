"""Paging a PostgreSQL store's sample table in real Chromium: Next follows the page token the
server gave, Previous goes back to the page before, each page the rows the API lists there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.browser import PageWatch, require_chromium

require_chromium()

import httpx  # noqa: E402
from tests.support.server import LiveServer  # noqa: E402
from tests.support.viewer_data import store_qa_samples  # noqa: E402

import aieval.server as server_api  # noqa: E402

N_SAMPLES = 180
_ROWS = "#run-samples tbody tr[data-sample]"


@pytest.fixture
def page_watch() -> PageWatch:
    """Uncaught script errors fail a test here; console messages do not."""
    return PageWatch(console=False)


def _shown(page: Any, first: int) -> list[str]:
    page.wait_for_function(
        "t => document.getElementById('sample-count').textContent.startsWith(t)",
        arg=f"{first}–",
    )
    ids: list[str] = page.locator(_ROWS).evaluate_all("rows => rows.map(r => r.dataset.sample)")
    return ids


def test_next_and_previous_follow_the_page_tokens(page: Any, pg_url: str, tmp_path: Path) -> None:
    run_id = store_qa_samples(pg_url, N_SAMPLES, seed=2, skill=0.6)
    app = server_api.create_app(pg_url, server_api.ServerSettings(dataset_roots=(tmp_path,)))
    with LiveServer(app) as live, httpx.Client(base_url=live.url, timeout=30) as client:
        sort = {"sort": "score:token_f1", "order": "desc", "limit": 50}
        want = [
            [s["id"] for s in client.get(
                f"/api/runs/{run_id}/samples", params={**sort, "offset": k}
            ).json()["samples"]]
            for k in (0, 50, 100, 150)
        ]  # fmt: skip
        page.goto(f"{live.url}/#/runs/{run_id}")
        page.wait_for_selector(_ROWS)
        page.locator("th[data-sort='score:token_f1'] button").click()
        page.wait_for_selector("th[data-sort='score:token_f1'][aria-sort=ascending]")
        page.locator("th[data-sort='score:token_f1'] button").click()
        page.wait_for_selector("th[data-sort='score:token_f1'][aria-sort=descending]")
        assert _shown(page, 1) == want[0]
        tokens: list[str] = []
        page.on(
            "request",
            lambda r: tokens.append(r.url) if "after=" in r.url else None,
        )
        for k in (1, 2, 3):
            page.click("#sample-next")
            assert _shown(page, 50 * k + 1) == want[k]
        assert page.locator("#sample-next").is_hidden()
        page.click("#sample-prev")
        assert _shown(page, 101) == want[2]
        page.click("#sample-prev")
        assert _shown(page, 51) == want[1]
        page.click("#sample-prev")
        assert _shown(page, 1) == want[0]
        assert len(tokens) >= 4  # the pages after the first were asked by token
    app.state.manager.shutdown()
