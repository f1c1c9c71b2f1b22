"""The viewer names how each interval was drawn, as the report formats do: beside the pass
rate, the weighted score and each criterion, and in the compare page's metrics (Chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.browser import PageWatch, require_chromium, watched_page

require_chromium()

from tests.support.server import LiveServer  # noqa: E402

import aieval.server as server_api  # noqa: E402
from aieval import run  # noqa: E402


def _rows(shift: int) -> list[dict[str, Any]]:
    words = ["alpha beta", "gamma", "delta epsilon", "zeta"]
    return [
        {
            "id": f"r{i}",
            "prompt": "q",
            "expected": words[i % 4],
            "prediction": words[(i + shift * (i % 3 == 0)) % 4],
        }
        for i in range(12)
    ]


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """The viewer's address, a baseline run's id and a candidate run's id."""
    root: Path = tmp_path_factory.mktemp("methods-viewer")
    db = root / "runs.db"
    ids = [
        run(
            name="methods", dataset=_rows(shift), scorers=["exact_match", "token_f1"], store=str(db)
        ).id
        for shift in (0, 1)
    ]
    app = server_api.create_app(db, server_api.ServerSettings(dataset_roots=(root,)))
    try:
        with LiveServer(app) as live:
            yield live.url, ids[0], ids[1]
    finally:
        app.state.manager.shutdown()


def _text(request: pytest.FixtureRequest, address: str, selector: str, has_text: str) -> str:
    with watched_page(request.getfixturevalue("browser"), PageWatch(console=False)) as page:
        page.goto(address)
        found = page.locator(selector, has_text=has_text).first
        found.wait_for(timeout=120_000)  # reports build in the background
        text: str = found.inner_text()
    return " ".join(text.split())


def test_the_run_page_names_each_intervals_method(
    request: pytest.FixtureRequest, viewer: tuple[str, str, str]
) -> None:
    url, base, _ = viewer
    cards = _text(request, f"{url}/#/runs/{base}", "#kpis", "Pass rate")
    assert "(Wilson score)" in cards and "(percentile bootstrap)" in cards
    criteria = _text(request, f"{url}/#/runs/{base}", "figcaption", "token_f1")
    assert "] (percentile bootstrap)" in criteria


def test_the_compare_page_names_each_metrics_method(
    request: pytest.FixtureRequest, viewer: tuple[str, str, str]
) -> None:
    url, base, cand = viewer
    table = _text(request, f"{url}/#/compare?baseline={base}&candidate={cand}", "table", "Method")
    assert "one-sided 95% bounds," in table
    assert "95% CI, paired percentile bootstrap" in table
