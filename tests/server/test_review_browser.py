"""The review page (Chromium): two reviewers with their own tokens label a queue by keyboard,
blind until each save; the judge's verdict and the agreement appear after it; a token without
the review right is refused."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

playwright_api = pytest.importorskip("playwright.sync_api")

from tests.server.test_review_api import judged_run  # noqa: E402
from tests.support.browser import PageWatch, watched_page  # noqa: E402
from tests.support.server import LiveServer  # noqa: E402

import aieval.server as server_api  # noqa: E402
from aieval import Store  # noqa: E402
from aieval.judges import QueueRequest, build_queue  # noqa: E402

pytestmark = pytest.mark.slow
TOKENS = {"ann": "ann-review-secret", "bob": "bob-review-secret"}
OWN = "own-secret-token"
ITEMS = 10


@pytest.fixture(scope="module")
def review_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """The server's address, the queue's id and the store's location."""
    root: Path = tmp_path_factory.mktemp("review-viewer")
    db = str(root / "runs.db")
    with Store(db) as store:
        judged_run(store, n=ITEMS)
        queue_id = build_queue(store, QueueRequest(("judged",), "helpful", size=ITEMS))
    settings = server_api.ServerSettings(dataset_roots=(root,), token=OWN, review_tokens=TOKENS)
    app = server_api.create_app(db, settings)
    try:
        with LiveServer(app) as live:
            yield live.url, queue_id, db
    finally:
        app.state.manager.shutdown()


@contextmanager
def _page(browser: Any, url: str, token: str, watch: PageWatch | None = None) -> Iterator[Any]:
    """A watched page signed in with ``token``, and what the review API answered it."""
    with watched_page(browser, watch or PageWatch()) as page:
        answers: list[str] = []

        def keep(response: Any) -> None:
            if "/api/review/" in response.url:
                answers.append(f"{response.url} {response.text()}")

        page.on("response", keep)
        page.goto(f"{url}/?token={token}")
        yield page, answers


def _label_all(page: Any, answers: list[str]) -> int:
    """Label every item served, by keyboard, checking each is blind until saved."""
    labelled = 0
    while True:
        page.locator("#review-item, #review-done").first.wait_for()
        if page.locator("#review-done").count():
            return labelled
        ord = page.locator("#review-item").get_attribute("data-ord")
        assert "JUDGE-REASON" not in page.content()  # nothing of the judge in the DOM
        assert not any("JUDGE-REASON" in a for a in answers)  # ... nor in any answer yet
        page.keyboard.press("f" if labelled % 3 == 0 else "p")
        page.keyboard.press("n")
        page.keyboard.type("seen")
        page.keyboard.press("Escape")
        page.keyboard.press("s")
        page.locator("#review-reveal:not([hidden]) #judge-reason").wait_for()
        assert "JUDGE-REASON-" in page.locator("#judge-reason").inner_text()
        assert "items agree with the judge" in page.locator("#review-agreement").inner_text()
        figures = page.locator("#review-figures").inner_text()
        if labelled == ITEMS - 1:  # the queue's live figures, each with its interval
            interval = r"-?\d\.\d\d \(-?\d\.\d\d–-?\d\.\d\d\)"
            assert re.search(f"kappa {interval} · TPR {interval} · TNR {interval}", figures)
            assert re.search(r"base rate \d\.\d\d · \d+ items, \d+ labels · ", figures)
        answers.clear()  # the next item's answers must be blind again
        labelled += 1
        page.keyboard.press("Enter")
        page.locator(f"#review-done, #review-item:not([data-ord='{ord}'])").first.wait_for()


def test_two_reviewers_label_by_keyboard_blind_and_a_third_token_is_refused(
    browser: Any, review_server: tuple[str, str, str]
) -> None:
    url, queue_id, db = review_server
    done = {}
    for name, token in TOKENS.items():
        with _page(browser, url, token) as (page, answers):
            page.goto(f"{url}/static/review.html?queue={queue_id}")
            done[name] = _label_all(page, answers)
            assert f"{ITEMS} labelled by you" in page.locator("#review-progress").inner_text()
    assert done == {"ann": ITEMS, "bob": ITEMS}
    with Store(db) as store:
        labels = store.review_labels(queue=queue_id)
        assert store.review_queue(queue_id).complete == ITEMS
    assert len(labels) == 2 * ITEMS and {label.note for label in labels} == {"seen"}
    assert len({(label.sample_id, label.reviewer) for label in labels}) == 2 * ITEMS
    # the server's own token has no review right: the page says so
    # (the browser logs the refused request as a console error: that one is expected)
    with _page(browser, url, OWN, PageWatch(console_allows=("403",))) as (page, _):
        page.goto(f"{url}/static/review.html?queue={queue_id}")
        refused = page.locator("#review-error")
        refused.wait_for()
        assert "no review right" in refused.inner_text()
        # the run page, with the server's own token: a Judges panel with the judge's figures,
        # the same the review API and aieval judges give (one reviewer's two labels an item)
        with Store(db) as store:
            [run_id] = store.review_queue(queue_id).runs
        page.goto(f"{url}/#/runs/{run_id}")
        panel = page.locator("#run-judges")
        panel.wait_for()
        text = panel.inner_text()
        assert "helpful@m" in text and "kappa judge-human" in text and "TPR" in text
        assert "pass rate, corrected" in text and "kappa human-human" in text
        assert re.search(r"base rate \(human pass\)\s+\d\.\d{3}", text)
