"""A filtered first look at a large PostgreSQL run in real Chromium: the rows come with a
lower bound ("51+"), never shown as the exact count, and the exact count replaces it when its
own request answers; paging needs no total."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.browser import PageWatch, require_chromium

require_chromium()

from tests.support.server import LiveServer  # noqa: E402
from tests.support.viewer_data import store_qa_samples  # noqa: E402

import aieval.server as server_api  # noqa: E402
import aieval.store._table_queries as table_queries  # noqa: E402

N_SAMPLES = 180  # a third of them on the topic "billing": 60
_ROWS = "#run-samples tbody tr[data-sample]"


@pytest.fixture
def page_watch() -> PageWatch:
    """Uncaught script errors fail a test here; console messages do not."""
    return PageWatch(console=False)


def _count_is(page: Any, text: str) -> None:
    page.wait_for_function(
        "t => document.getElementById('sample-count').textContent === t", arg=text
    )


def test_a_bounded_count_shows_as_one_until_the_exact_count_arrives(
    page: Any, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the run's first 20 samples bound the count: the page's own 51 rows are the bound
    monkeypatch.setattr(table_queries, "COUNT_PREFIX", 20)
    run_id = store_qa_samples(pg_url, N_SAMPLES, seed=2, skill=0.6)
    app = server_api.create_app(pg_url, server_api.ServerSettings(dataset_roots=(tmp_path,)))
    held: list[Any] = []
    with LiveServer(app) as live:
        page.goto(f"{live.url}/#/runs/{run_id}")
        _count_is(page, f"1–50 of {N_SAMPLES} samples")  # an index counts the run: exact

        def hold(route: Any) -> None:  # answered when the test has seen the bound
            held.append(route)

        page.route(lambda url: "count=exact" in url, hold)
        with page.expect_request(lambda r: "count=exact" in r.url):
            page.fill("#meta-filter", "topic=billing")
            page.locator("#meta-filter").dispatch_event("change")
        _count_is(page, f"1–50 of 51+ matching samples (of {N_SAMPLES})")
        assert page.locator(_ROWS).count() == 50
        assert page.locator("#sample-count").get_attribute("aria-busy") == "true"
        assert page.locator("#sample-next").is_visible()  # the page token says there is more
        assert len(held) == 1
        held[0].continue_()
        _count_is(page, f"1–50 of 60 matching samples (of {N_SAMPLES})")
        assert page.locator("#sample-count").get_attribute("aria-busy") is None
        page.unroute_all()
        page.click("#sample-next")
        _count_is(page, f"51–60 of 60 matching samples (of {N_SAMPLES})")
        assert page.locator(_ROWS).count() == 10
        assert page.locator("#sample-next").is_hidden()
    app.state.manager.shutdown()
