"""The sample table, runs list and side-by-side view in real Chromium, over stored QA runs.

The runs are plain QA runs (recorded predictions, exact_match and token_f1), the case where
the table used to show empty columns; one prediction carries markup that must stay text.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.browser import ARTIFACTS, VIEWPORT, PageWatch, require_chromium

require_chromium()

import httpx  # noqa: E402
from tests.support.openai_server import OpenAIServer, Reply  # noqa: E402
from tests.support.server import LiveServer  # noqa: E402
from tests.support.viewer_data import HOSTILE_PREDICTION, NEEDLE, store_qa_run  # noqa: E402

import aieval.server as server_api  # noqa: E402
from aieval import run  # noqa: E402
from aieval.providers import OpenAIProvider  # noqa: E402
from aieval.scorers import llm_judge  # noqa: E402

N_SAMPLES = 2_000  # the 100,000-sample figure comes from bench/viewer.py


class Runs:
    def __init__(self, url: str, client: httpx.Client, ids: dict[str, str]) -> None:
        self.url, self.client, self.ids = url, client, ids

    def samples(self, run: str, **params: Any) -> dict[str, Any]:
        data: dict[str, Any] = self.client.get(
            f"/api/runs/{self.ids[run]}/samples", params=params
        ).json()
        return data


JUDGED = 6
REASONING = "Faithful: it cites the refund window"


def _judge_verdict(body: Any) -> Reply:
    """A valid verdict for even prompts, prose (a malformed verdict) for odd ones."""
    prompt = json.dumps(body)
    if any(f"q{i}" in prompt for i in range(1, JUDGED, 2)):
        return Reply("I would say it is mostly fine.")
    return Reply(json.dumps({"score": 8, "reason": REASONING}))


def _failing_target(example: Any) -> str:
    raise RuntimeError("upstream refused the call")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    root = tmp_path_factory.mktemp("table")
    db = root / "runs.db"
    ids = {
        "baseline": store_qa_run(db, N_SAMPLES, seed=1, skill=0.7),
        "candidate": store_qa_run(db, N_SAMPLES, seed=1, skill=0.5),
    }
    broken = run(
        name="all-errors",
        dataset=[{"id": f"e{i}", "prompt": "q", "expected": "a"} for i in range(3)],
        scorers=["exact_match"],
        target=_failing_target,
        store=str(db),
    )
    ids["errored"] = broken.id
    with OpenAIServer() as judge_server:
        judge_server.responder = _judge_verdict
        judged = run(
            name="judged",
            dataset=[
                {"id": f"j{i}", "prompt": f"q{i}", "expected": "a", "prediction": f"answer {i}"}
                for i in range(JUDGED)
            ],
            scorers=[
                llm_judge(
                    rubric="Reward faithful answers.",
                    provider=OpenAIProvider(judge_server.base_url),
                    model="judge",
                    name="faithfulness",
                )
            ],
            store=str(db),
        )
    ids["judged"] = judged.id
    app = server_api.create_app(db, server_api.ServerSettings(dataset_roots=(root,)))
    try:
        with LiveServer(app) as live, httpx.Client(base_url=live.url, timeout=20) as client:
            yield Runs(live.url, client, ids)
    finally:
        app.state.manager.shutdown()


@pytest.fixture
def page_watch() -> PageWatch:
    """Uncaught script errors fail a test here; console messages do not."""
    return PageWatch(console=False)


def _open_run(page: Any, runs: Runs, which: str = "candidate") -> float:
    started = time.perf_counter()
    page.goto(f"{runs.url}/#/runs/{runs.ids[which]}")
    page.wait_for_selector("#run-samples tbody tr[data-sample]")
    return time.perf_counter() - started


def _shown_ids(page: Any) -> list[str]:
    ids: list[str] = page.locator("#run-samples tbody tr[data-sample]").evaluate_all(
        "rows => rows.map(r => r.dataset.sample)"
    )
    return ids


def _wait_for_count(page: Any, text: str) -> None:
    page.wait_for_function(
        "t => document.getElementById('sample-count').textContent.includes(t)", arg=text
    )


def _snapshot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"viewer-{name}.png"))
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= VIEWPORT["width"], f"{name} page scrolls sideways ({width}px wide)"


def test_table_shows_texts_and_every_scorer_of_a_qa_run(page: Any, runs: Runs) -> None:
    seconds = _open_run(page, runs)
    first = runs.samples("candidate", limit=1)["samples"][0]
    row = page.locator(f"#run-samples tr[data-sample='{first['id']}']")
    assert row.locator("td[data-field=input]").inner_text() == first["input"]
    assert row.locator("td[data-field=prediction]").inner_text() == first["prediction"]
    assert (
        row.locator("td[data-scorer=token_f1]").inner_text() == f"{first['scores']['token_f1']:.2f}"
    )
    assert page.locator("#run-samples tbody tr[data-sample]").count() == 50
    _wait_for_count(page, f"1–50 of {N_SAMPLES} samples")
    page.locator("#run-samples").scroll_into_view_if_needed()
    _snapshot(page, "table")
    _record("first_render_s", seconds)


def test_search_narrows_to_matching_samples(page: Any, runs: Runs) -> None:
    _open_run(page, runs)
    expected = runs.samples("candidate", q=NEEDLE, limit=1000)
    started = time.perf_counter()
    page.fill("#sample-search", NEEDLE.upper())
    _wait_for_count(page, f"of {expected['total']} matching samples")
    _record("search_s", time.perf_counter() - started)
    assert _shown_ids(page) == [s["id"] for s in expected["samples"]][:50]
    assert all(NEEDLE in t for t in page.locator("td[data-field=input]").all_inner_texts())


def test_sorting_by_a_scorer_both_ways(page: Any, runs: Runs) -> None:
    _open_run(page, runs)
    header = page.locator("th[data-sort='score:token_f1'] button")
    header.click()
    page.wait_for_selector("th[data-sort='score:token_f1'][aria-sort=ascending]")
    up = runs.samples("candidate", sort="score:token_f1", order="asc")
    page.wait_for_function(
        "id => document.querySelector('#run-samples tbody tr[data-sample]').dataset.sample === id",
        arg=up["samples"][0]["id"],
    )
    values = [float(v) for v in page.locator("td[data-scorer=token_f1]").all_inner_texts()]
    assert values == sorted(values)
    header.click()
    page.wait_for_selector("th[data-sort='score:token_f1'][aria-sort=descending]")
    page.wait_for_function(
        "() => document.querySelector('td[data-scorer=token_f1]').textContent === '1.00'"
    )
    values = [float(v) for v in page.locator("td[data-scorer=token_f1]").all_inner_texts()]
    assert values == sorted(values, reverse=True)


def test_filters_by_outcome_score_range_and_metadata(page: Any, runs: Runs) -> None:
    _open_run(page, runs)
    passed = runs.samples("candidate", filter="passed")["total"]
    page.click("button[data-filter=passed]")
    _wait_for_count(page, f"of {passed} matching samples")
    page.click("button[data-filter=all]")
    ranged = runs.samples("candidate", scorer="token_f1", min=0.2, max=0.6)["total"]
    page.select_option("#range-scorer", "token_f1")
    page.fill("#range-min", "0.2")
    page.fill("#range-max", "0.6")
    page.locator("#range-max").dispatch_event("change")
    _wait_for_count(page, f"of {ranged} matching samples")
    values = [float(v) for v in page.locator("td[data-scorer=token_f1]").all_inner_texts()]
    assert values and all(0.2 <= v <= 0.6 for v in values)
    both = runs.samples("candidate", scorer="token_f1", min=0.2, max=0.6, meta="vip")["total"]
    page.fill("#meta-filter", "vip")
    page.locator("#meta-filter").dispatch_event("change")
    _wait_for_count(page, f"of {both} matching samples")
    page.locator("#run-samples").scroll_into_view_if_needed()
    _snapshot(page, "table-filtered")


def test_markup_in_a_prediction_renders_as_text(page: Any, runs: Runs) -> None:
    _open_run(page, runs)
    row = page.locator("#run-samples tr[data-sample=q000007]")
    assert row.locator("td[data-field=prediction]").inner_text() == HOSTILE_PREDICTION
    row.locator("button.expand").click()
    expanded = page.locator("#run-samples tr.detail").inner_text()
    assert "</textarea><script>window.__owned=3</script>" in expanded
    page.goto(f"{runs.url}/#/runs/{runs.ids['candidate']}/samples/q000007")
    shown = page.locator("pre[data-field=prediction]").text_content()
    assert shown == HOSTILE_PREDICTION
    assert page.locator("main script, main b, main textarea").count() == 0
    assert page.evaluate("window.__owned") is None


def test_regressions_link_to_the_side_by_side_view(page: Any, runs: Runs) -> None:
    base, cand = runs.ids["baseline"], runs.ids["candidate"]
    comparison = runs.client.get("/api/compare", params={"baseline": base, "candidate": cand})
    worst = comparison.json()["regressions"][0]["id"]
    page.goto(f"{runs.url}/#/compare?baseline={base}&candidate={cand}")
    page.locator(f"#regressions a.pair-link[aria-label='Sample {worst} side by side']").click()
    page.wait_for_selector("#pair-candidate")
    pair = runs.client.get(
        f"/api/compare/samples/{worst}", params={"baseline": base, "candidate": cand}
    ).json()
    left = page.locator("pre[data-field=baseline-prediction]").text_content()
    right = page.locator("pre[data-field=candidate-prediction]").text_content()
    assert (left, right) == (pair["baseline"]["prediction"], pair["candidate"]["prediction"])
    for side in ("baseline", "candidate"):
        value = pair[side]["scores"]["token_f1"]["value"]
        cell = page.locator(f"#pair-{side} tr[data-scorer=token_f1] td.num").inner_text()
        assert cell == f"{value:.3f}"
    inserted = "".join(t for op, t in pair["diff"]["segments"] if op == "insert")
    assert "".join(page.locator("#diff ins").all_text_contents()) == inserted
    _snapshot(page, "side-by-side")


def test_runs_list_shows_metrics_errors_and_states(page: Any, runs: Runs) -> None:
    page.goto(runs.url + "/#/")
    page.wait_for_selector("table.runs tbody tr")
    errored = page.locator(f"tr[data-run='{runs.ids['errored']}']")
    assert errored.locator("[data-state]").get_attribute("data-state") == "errored"
    assert errored.locator("[data-state]").inner_text() == "every sample errored"
    assert errored.locator("td[data-field=errors]").inner_text() == "3"
    clean = page.locator(f"tr[data-run='{runs.ids['candidate']}']")
    assert clean.locator("[data-state]").inner_text() == "completed"
    assert "token_f1" in clean.locator("td.metrics").inner_text()
    _snapshot(page, "runs")
    errored.locator("th a").click()
    page.wait_for_selector("#run-errors")
    assert page.locator("#run-errors").inner_text() == "every sample errored"


def test_judge_reasoning_beside_its_score_and_malformed_counts(page: Any, runs: Runs) -> None:
    _open_run(page, runs, "judged")
    bundle = runs.client.get(f"/api/runs/{runs.ids['judged']}").json()
    failures = bundle["judges"]["faithfulness"]["parse_failures"]
    assert failures == JUDGED // 2
    cell = page.locator("#s-judges ~ * tr[data-judge=faithfulness] td[data-field=malformed]")
    assert cell.inner_text().startswith(f"{failures} (")
    flagged = page.locator(
        "#s-judges ~ * tr[data-judge=faithfulness] td[data-field=malformed_samples]"
    )
    assert bundle["judges"]["faithfulness"]["malformed"] == JUDGED // 2
    assert flagged.inner_text() == str(JUDGED // 2)
    good = page.locator("#run-samples tr[data-sample=j0]")
    assert good.locator("td[data-scorer=faithfulness]").inner_text() == "0.80"
    good.locator("button.expand").click()
    reasons = page.locator("#run-samples tr.detail .score-reasons").inner_text()
    assert "faithfulness 0.800" in reasons and REASONING in reasons
    bad = page.locator("#run-samples tr[data-sample=j1] td[data-scorer=faithfulness]")
    # a malformed verdict shows its 0.0 with the flag, and the reason on hover
    assert bad.inner_text().startswith("0.00")
    assert bad.locator(".badge.malformed").inner_text() == "malformed"
    why = "verdict is not a single JSON object"
    assert why in (bad.get_attribute("title") or "")
    page_of = runs.samples("judged", filter="error")
    assert page_of["total"] == JUDGED // 2  # counted as errors, as by the run
    assert all(item["malformed"] == {"faithfulness": why} for item in page_of["samples"])
    assert all(item["scores"]["faithfulness"] == 0.0 for item in page_of["samples"])
    assert runs.samples("judged", filter="no_error")["total"] == JUDGED - JUDGED // 2
    page.locator("#run-samples").scroll_into_view_if_needed()
    _snapshot(page, "table-judge")


def _record(name: str, seconds: float) -> None:
    """Timings go to a file beside the screenshots (recorded, never asserted)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "viewer-timings.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[f"{name}@{N_SAMPLES}"] = round(seconds, 3)
    path.write_text(json.dumps(data, indent=2))
