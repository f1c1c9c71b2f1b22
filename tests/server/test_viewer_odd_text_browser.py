"""The viewer (real Chromium, real uvicorn) shows stored text that UTF-8 cannot hold (a lone
surrogate) or that holds NUL exactly: in the sample table, the sample page and side by side."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.browser import require_chromium

require_chromium()

from tests.support.server import LiveServer  # noqa: E402

import aieval.server as server_api  # noqa: E402
from aieval import run  # noqa: E402

PREDICTION = "a\udcffb\x00c café"
EXPECTED = "a\udcffb"
ODD_ID = "s\udcfe"  # an id UTF-8 cannot hold: listed, though no address can name it


@dataclass(frozen=True)
class Served:
    url: str
    baseline: str
    candidate: str


def _rows(odd: bool) -> list[dict[str, Any]]:
    return [
        # the baseline answers right, the candidate wrong: both are regressions
        {
            "id": "r0",
            "prompt": "q",
            "expected": EXPECTED,
            "prediction": PREDICTION if odd else EXPECTED,
        },
        {"id": ODD_ID, "prompt": "q", "expected": "yes", "prediction": "no" if odd else "yes"},
    ]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root: Path = tmp_path_factory.mktemp("odd-text-viewer")
    db = str(root / "runs.db")
    baseline, candidate = (
        run(name="odd-text", dataset=_rows(odd), scorers=["exact_match"], store=db).id
        for odd in (False, True)
    )
    app = server_api.create_app(db, server_api.ServerSettings(dataset_roots=(root,)))
    try:
        with LiveServer(app) as live:
            yield Served(live.url, baseline, candidate)
    finally:
        app.state.manager.shutdown()


def _units(text: str) -> list[int]:
    """``text`` as UTF-16 code units, as a JavaScript string holds it."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def _shown_units(page: Any, selector: str) -> list[int]:
    """The code units of an element's text (the page's string, not a lossy copy of it)."""
    units: list[int] = page.locator(selector).evaluate(
        "el => Array.from({length: el.textContent.length}, (_, i) => el.textContent.charCodeAt(i))"
    )
    return units


def test_sample_page_shows_the_exact_text(page: Any, served: Served) -> None:
    page.goto(f"{served.url}/#/runs/{served.candidate}/samples/r0")
    page.wait_for_selector("main[aria-busy=false]")
    assert page.locator("h1").inner_text() == "Sample r0"
    assert page.locator("[role=alert]").count() == 0
    assert _shown_units(page, "pre[data-field=prediction]") == _units(PREDICTION)


def test_sample_table_lists_every_sample(page: Any, served: Served) -> None:
    page.goto(f"{served.url}/#/runs/{served.candidate}")
    page.wait_for_selector("#sample-count:has-text('of 2 samples')")
    assert page.locator("#run-samples tbody tr").count() == 2
    assert page.locator("[role=alert]").count() == 0
    assert _shown_units(page, "tr[data-sample=r0] td[data-field=prediction]") == _units(PREDICTION)
    # the odd id is listed as text with why it has no link; its row opens in place
    assert _shown_units(page, "#run-samples th .no-address") == _units(ODD_ID)
    title = page.locator("#run-samples th .no-address").get_attribute("title")
    assert title is not None and "lone surrogate" in title
    page.locator("#run-samples tbody tr").nth(1).locator("button.expand").click()
    assert page.locator("#run-samples tr.detail dd").all_inner_texts()[:3] == ["q", "no", "yes"]
    page.locator("#run-samples a.sample-link", has_text="r0").click()
    page.wait_for_selector("main[aria-busy=false]")
    assert _shown_units(page, "pre[data-field=prediction]") == _units(PREDICTION)


def test_comparison_lists_both_regressions(page: Any, served: Served) -> None:
    page.goto(f"{served.url}/#/compare?baseline={served.baseline}&candidate={served.candidate}")
    page.wait_for_selector("#regressions tbody tr")
    assert page.locator("#regressions tbody tr").count() == 2
    assert _shown_units(page, "#regressions th .no-address") == _units(ODD_ID)
    page.get_by_label("Sample r0 side by side", exact=True).click()
    page.wait_for_selector("#pair")
    assert _shown_units(page, "pre[data-field=candidate-prediction]") == _units(PREDICTION)


def test_side_by_side_shows_the_exact_text(page: Any, served: Served) -> None:
    page.goto(
        f"{served.url}/#/compare/samples/r0?baseline={served.baseline}&candidate={served.candidate}"
    )
    page.wait_for_selector("#pair")
    assert _shown_units(page, "pre[data-field=candidate-prediction]") == _units(PREDICTION)
