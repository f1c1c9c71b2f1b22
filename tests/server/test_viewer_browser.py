"""The web viewer in a real browser (Debian's Chromium) against a real uvicorn on 127.0.0.1.

One evaluation is started over the API with a scorer that holds every sample after the first
until the test lets it go, so its run page is watched filling in live however slow the machine;
a baseline and a candidate of the same workflow give the compare page something to decide on.
Every request the page makes outside 127.0.0.1 is blocked and counted.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.browser import (
    ARTIFACTS,
    VIEWPORT,
    PageWatch,
    browser,  # noqa: F401 (modules written before tests/support/browser.py import it from here)
    require_chromium,
)

require_chromium()

import httpx  # noqa: E402
from tests.support.server import EXAMPLES, LiveServer  # noqa: E402

import aieval.server as server_api  # noqa: E402

# Untrusted text in a recorded run: markup that must show up as text, never as elements, and an
# image on an outside address that must never be fetched.
HOSTILE = (
    '<img src="http://203.0.113.9/x.png" onerror="window.__owned=1">'
    "<script>window.__owned=2</script>"
)
PACE_SCORER = """
from aieval.scorers import scorer

@scorer(name="pace")
def pace(example, output):
    return 0.8
"""
# The first sample is scored at once; the others wait (at most 60 s) for the release file.
# Waiting asynchronously leaves the run's loop free to store and announce the first sample.
HELD_SCORER = """
import asyncio, time
from pathlib import Path
from aieval.scorers import scorer

RELEASE = Path(__file__).with_name("release")
scored = 0

@scorer(name="held")
async def held(example, output):
    global scored
    scored += 1
    deadline = time.monotonic() + 60
    while scored > 1 and not RELEASE.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return 0.8
"""
FAILING_SAMPLE = "sa-001-refunded"


@dataclass
class Viewer:
    base_url: str
    client: Any
    root: Path

    def start(self, body: dict[str, Any]) -> str:
        response = self.client.post("/api/evaluations", json=body)
        assert response.status_code == 202, response.text
        run_id: str = response.json()["run_id"]
        return run_id

    def wait_done(self, run_id: str, timeout: float = 120.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            response = self.client.get(f"/api/runs/{run_id}")
            if response.status_code == 200 and response.json()["run"]["status"] != "running":
                bundle: dict[str, Any] = response.json()
                return bundle
            time.sleep(0.1)
        raise AssertionError(f"run {run_id} did not finish in {timeout} s")


def _workspace(root: Path) -> None:
    """Workflow, baseline runs, and candidate runs where one refund turned into a bad one."""
    shutil.copy(EXAMPLES / "support_agent.yaml", root / "support_agent.yaml")
    shutil.copytree(EXAMPLES / "support_agent_runs", root / "baseline_runs")
    shutil.copytree(EXAMPLES / "support_agent_runs", root / "candidate_runs")
    bad = json.loads((EXAMPLES / "support_agent_runs" / "sa-002-forbidden-tool.json").read_text())
    bad["metadata"]["inputs"]["customer_message"] = HOSTILE
    bad["final_output"]["reply"] = "Refund sent. " + HOSTILE
    (root / "candidate_runs" / f"{FAILING_SAMPLE}.json").write_text(json.dumps(bad))
    (root / "pace.py").write_text(PACE_SCORER)
    (root / "held.py").write_text(HELD_SCORER)


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    root = tmp_path_factory.mktemp("viewer")
    _workspace(root)
    settings = server_api.ServerSettings(dataset_roots=(root,), allow_imports=True)
    app = server_api.create_app(root / "runs.db", settings)
    try:
        # generous: on a machine at load 20+ one API answer has taken seconds
        with LiveServer(app) as live, httpx.Client(base_url=live.url, timeout=60) as client:
            yield Viewer(live.url, client, root)
    finally:
        app.state.manager.shutdown()


@pytest.fixture(scope="module")
def baseline(viewer: Viewer) -> str:
    run_id = viewer.start(
        {
            "name": "support-agent",
            "dataset": "baseline_runs",
            "workflow": "support_agent.yaml",
        }
    )
    viewer.wait_done(run_id)
    return run_id


@pytest.fixture(scope="module")
def candidate(viewer: Viewer, baseline: str) -> str:
    """The candidate run, started (not awaited) the first time a test asks for it."""
    return viewer.start(
        {
            "name": "support-agent",
            "dataset": "candidate_runs",
            "workflow": "support_agent.yaml",
            "imports": ["pace.py"],
            "scorers": ["pace"],
            "settings": {"concurrency": 1},
        }
    )


@pytest.fixture
def held_run(viewer: Viewer) -> Iterator[tuple[str, Path]]:
    """A run of the candidate runs held after its first sample until the release file exists.

    Its own name and its own run: whatever ran before, the test watching it finds it live.
    """
    release = viewer.root / "release"
    release.unlink(missing_ok=True)
    run_id = viewer.start(
        {
            "name": "support-agent-live",
            "dataset": "candidate_runs",
            "workflow": "support_agent.yaml",
            "imports": ["held.py"],
            "scorers": ["held"],
            "settings": {"concurrency": 1},
        }
    )
    try:
        yield run_id, release
    finally:
        release.touch()
        viewer.wait_done(run_id)


@pytest.fixture
def page_watch(viewer: Viewer) -> PageWatch:
    """The browser logs every 404 response; the tests assert on the pages' own messages.
    (Asks for the viewer: its server is up before the page opens.)"""
    return PageWatch(console_allows=("status of 404",))


def _open(page: Any, viewer: Viewer, hash_route: str) -> None:
    page.goto(viewer.base_url + "/#" + hash_route)
    page.wait_for_selector("main[aria-busy=false]")


def _snapshot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"viewer-{name}.png"))
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= VIEWPORT["width"], f"{name} page scrolls sideways ({width}px wide)"


def test_run_page_follows_a_live_run_to_completion(
    page: Any, viewer: Viewer, held_run: tuple[str, Path]
) -> None:
    run_id, release = held_run
    _open(page, viewer, f"/runs/{run_id}")
    bar = page.locator("#run-progress")
    assert bar.is_visible(), "a running evaluation shows a live progress bar"
    assert page.locator("#announcer[aria-live=polite]").count() == 1
    # the first sample's row arrives over the event stream while the rest are held
    page.wait_for_selector("#run-samples tbody tr", timeout=30_000)
    seen_live = page.locator("#run-samples tbody tr").count()
    assert viewer.client.get(f"/api/runs/{run_id}").json()["run"]["status"] == "running"
    _snapshot(page, "run-live")
    release.touch()
    page.locator("#run-status:text-is('completed')").wait_for(timeout=60_000)
    page.wait_for_selector("#grade-chart svg[role=img]")
    bundle = viewer.wait_done(run_id)
    total = bundle["samples"]
    assert 1 <= seen_live < total
    assert bar.get_attribute("aria-valuenow") == str(total)
    assert bar.get_attribute("aria-valuemax") == str(total)
    assert page.locator("#run-status").inner_text() == "completed"
    counters = page.locator("#run-counters").inner_text()
    passed = bundle["pass_rate"]["passed"]
    assert f"{total} / {total} done" in counters
    assert f"{passed} passed" in counters and f"{total - passed} failed" in counters
    grade_title = page.locator("#grade-chart svg > title").text_content() or ""
    for grade, count in bundle["grades"].items():
        assert f"{grade} {count}" in grade_title
    assert page.locator("#gate-chart svg[role=img] title").count() >= 1
    assert page.locator("#run-samples tbody tr").count() == total
    assert "completed" in page.locator("#announcer").inner_text().lower()
    _snapshot(page, "run")


def test_sample_filters_narrow_the_table(page: Any, viewer: Viewer, baseline: str) -> None:
    _open(page, viewer, f"/runs/{baseline}")
    page.wait_for_selector("#run-samples tbody tr")
    listed = viewer.client.get(f"/api/runs/{baseline}/samples", params={"filter": "gate_failed"})
    expected = {s["id"] for s in listed.json()["samples"]}
    page.click("button[data-filter=gate_failed]")
    page.wait_for_function(
        "n => document.querySelectorAll('#run-samples tbody tr').length === n", arg=len(expected)
    )
    shown = set(
        page.locator("#run-samples tbody tr").evaluate_all(
            "rows => rows.map(r => r.dataset.sample)"
        )
    )
    assert shown == expected
    assert page.get_attribute("button[data-filter=gate_failed]", "aria-pressed") == "true"
    assert page.get_attribute("button[data-filter=all]", "aria-pressed") == "false"


def test_sample_page_shows_gate_reasons_timeline_and_untrusted_text_as_text(
    page: Any, viewer: Viewer, candidate: str
) -> None:
    viewer.wait_done(candidate)
    detail = viewer.client.get(f"/api/runs/{candidate}/samples/{FAILING_SAMPLE}").json()
    _open(page, viewer, f"/runs/{candidate}/samples/{FAILING_SAMPLE}")
    gates = page.locator("#gate-results").inner_text()
    first = page.locator("#gate-results > li").first.inner_text()
    evaluation = detail["verdict"]["workflow"]
    assert evaluation["gate_failures"][0]["name"] in first, "failed gates come first"
    for failure in evaluation["gate_failures"]:
        assert failure["name"] in gates and failure["reason"] in gates
    steps = detail["workflow_run"]["steps"]
    assert page.locator("#step-timeline rect.step-bar").count() == len(steps)
    assert page.locator("#step-timeline > title").count() == 1
    for step in steps:
        assert step["name"] in (page.locator("#step-timeline").text_content() or "")
    # the hostile markup is on the page as characters, and did nothing
    prompt = page.locator("pre[data-field=prompt]").text_content()
    prediction = page.locator("pre[data-field=prediction]").text_content() or ""
    assert json.loads(prompt or "") == detail["input"]
    assert json.loads(prediction) == json.loads(detail["prediction"])
    for text in (prompt, prediction):
        assert "<script>window.__owned=2</script>" in text
    assert page.locator("main img, main script").count() == 0
    assert page.evaluate("window.__owned") is None
    _snapshot(page, "sample")
    page.locator("#step-timeline").scroll_into_view_if_needed()
    _snapshot(page, "sample-timeline")


def test_compare_page_shows_the_decision_and_links_regressions(
    page: Any, viewer: Viewer, baseline: str, candidate: str
) -> None:
    viewer.wait_done(candidate)
    comparison = viewer.client.get(
        "/api/compare", params={"baseline": baseline, "candidate": candidate}
    ).json()
    _open(page, viewer, "/compare")
    page.select_option("#baseline", baseline)
    page.select_option("#candidate", candidate)
    page.click("form.pickers button[type=submit]")
    page.wait_for_selector("#decision")
    decision = comparison["decision"]
    heading = page.locator("#decision h2").inner_text()
    titles = {"promote": "Promote", "block": "Blocked", "inconclusive": "Inconclusive"}
    assert heading == titles[decision["outcome"]]
    rules_text = page.locator("#decision .rules").inner_text()
    for rule in decision["rules"]:
        assert rule["rule"] in rules_text and rule["reason"] in rules_text
    assert page.locator("#forest svg[role=img]").count() >= 1
    regressed = [r["id"] for r in comparison["regressions"]]
    assert FAILING_SAMPLE in regressed
    _snapshot(page, "compare")
    page.click(f"#regressions th a:text-is('{FAILING_SAMPLE}')")
    page.wait_for_selector("#gate-results")
    assert page.url.endswith(f"#/runs/{candidate}/samples/{FAILING_SAMPLE}")


def test_long_change_lists_show_the_worst_first_and_the_rest_on_demand(
    page: Any, tmp_path: Path
) -> None:
    from aieval import run
    from aieval.scorers import exact_match

    rows = [{"id": f"q{i:02d}", "prompt": "?", "expected": "yes"} for i in range(30)]
    ids = [
        run(
            name="long-diff",
            dataset=[{**r, "prediction": answer} for r in rows],
            scorers=[exact_match],
            store=tmp_path / "runs.db",
        ).id
        for answer in ("yes", "no")  # every example regresses
    ]
    app = server_api.create_app(tmp_path / "runs.db", server_api.ServerSettings())
    try:
        with LiveServer(app) as live:
            page.goto(f"{live.url}/#/compare?baseline={ids[0]}&candidate={ids[1]}")
            page.wait_for_selector("#decision")
            assert page.locator("#s-regressions").inner_text() == "Regressions (30)"
            assert page.locator("#regressions tbody tr").count() == 20
            page.click("button.show-more:text-is('Show all 30')")
            assert page.locator("#regressions tbody tr").count() == 30
            assert page.locator("button.show-more").count() == 0
    finally:
        app.state.manager.shutdown()


def test_floor_violations_read_as_sentences(page: Any, viewer: Viewer, baseline: str) -> None:
    detail = viewer.client.get(f"/api/runs/{baseline}/samples/sa-006-refund-failed").json()
    (violation,) = detail["verdict"]["workflow"]["floor_violations"]
    _open(page, viewer, f"/runs/{baseline}/samples/sa-006-refund-failed")
    text = page.locator("#floor-violations").inner_text()
    name, score, floor = violation["criterion"], violation["score"], violation["floor"]
    assert text == f"{name}: {score:.2f} is below its critical floor {floor:.2f}"


@pytest.mark.parametrize(
    ("route", "heading", "message"),
    [
        pytest.param("/runs/no-such-run", "Run not found", "no-such-run", id="run"),
        pytest.param("/runs/no-such-run/samples/x", "Not found", "no-such-run", id="sample"),
        pytest.param("/nowhere", "Not found", "", id="route"),
    ],
)
def test_unknown_addresses_say_so(
    page: Any, viewer: Viewer, route: str, heading: str, message: str
) -> None:
    _open(page, viewer, route)
    page.wait_for_selector(f"h1:text-is('{heading}')")
    if message:
        assert message in page.locator("[role=alert]").inner_text()


def test_compare_from_a_run_suggests_the_previous_run_of_that_name(
    page: Any, viewer: Viewer, baseline: str, candidate: str
) -> None:
    viewer.wait_done(candidate)
    _open(page, viewer, f"/runs/{candidate}")
    page.click("text=Compare with another run")
    page.wait_for_selector("#baseline")
    assert page.locator("#candidate").input_value() == candidate
    assert page.locator("#baseline").input_value() == baseline
    page.click("form.pickers button[type=submit]")
    page.wait_for_selector("#decision")
    assert f"baseline={baseline}" in page.url


def test_runs_list_links_every_run(
    page: Any, viewer: Viewer, baseline: str, candidate: str
) -> None:
    viewer.wait_done(candidate)
    _open(page, viewer, "/")
    hrefs = page.locator("table.runs tbody th a").evaluate_all("as => as.map(a => a.hash)")
    assert f"#/runs/{baseline}" in hrefs and f"#/runs/{candidate}" in hrefs
    assert page.locator("table.runs svg[role=img] title").count() == len(hrefs)
    _snapshot(page, "runs")


def test_keyboard_reaches_a_sample_link_and_enter_opens_it(
    page: Any, viewer: Viewer, baseline: str
) -> None:
    _open(page, viewer, f"/runs/{baseline}")
    page.wait_for_selector("#run-samples tbody tr")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "skip-link"
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('sample-link')"):
            break
    else:
        pytest.fail("no sample link is reachable with Tab")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none"), "the focused link has no visible focus ring"
    target = page.evaluate("document.activeElement.hash")
    page.keyboard.press("Enter")
    page.wait_for_selector("#gate-results, section[aria-labelledby=s-scores]")
    assert page.url.endswith(target)
    assert page.locator("h1").inner_text().startswith("Sample ")


def test_server_sends_no_inline_script_and_a_self_only_policy(viewer: Viewer) -> None:
    html = viewer.client.get("/").text
    assert 'http-equiv="Content-Security-Policy"' in html
    assert "script-src 'self'" in html and "default-src 'self'" in html
    assert "<script>" not in html and "http://" not in html and "https://" not in html
    for asset in ("app.js", "app.css"):
        response = viewer.client.get(f"/static/{asset}")
        assert response.status_code == 200
        assert "http://" not in response.text.replace("http://www.w3.org/2000/svg", ""), (
            f"{asset} refers to an outside address"
        )


def test_token_link_opens_the_viewer_and_keeps_the_token_from_scripts(
    browser: Any,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    settings = server_api.ServerSettings(token="s3cret-token", dataset_roots=(tmp_path,))
    app = server_api.create_app(tmp_path / "runs.db", settings)
    with LiveServer(app) as live:
        base_url = live.url
        context = browser.new_context(viewport=VIEWPORT)
        try:
            tab = context.new_page()
            refused = tab.goto(base_url + "/")
            assert refused is not None and refused.status == 401
            tab.goto(base_url + "/?token=s3cret-token")
            tab.wait_for_selector("main[aria-busy=false]")
            assert tab.locator("h1").inner_text() == "Runs"
            assert tab.locator(".empty").count() == 1, "the runs API answered through the cookie"
            assert "s3cret-token" not in tab.evaluate("document.cookie")
            assert "s3cret-token" not in tab.url
        finally:
            context.close()
            app.state.manager.shutdown()


NA_SCORER = """
from aieval import Score, scorer

@scorer
def order_ref(prediction, expected):
    if expected == "skip":
        return Score(None, reason="no order number in the question")
    return 1.0
"""


def test_not_applicable_scores_read_n_a_never_error(page: Any, viewer: Viewer) -> None:
    (viewer.root / "na.py").write_text(NA_SCORER)
    rows = [{"id": f"na-{i}", "prompt": "p", "expected": e, "prediction": e}
            for i, e in enumerate(["skip", "x", "skip"])]  # fmt: skip
    (viewer.root / "na_rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run_id = viewer.start(
        {"name": "na", "dataset": "na_rows.jsonl", "imports": ["na.py"], "scorers": ["order_ref"]}
    )
    viewer.wait_done(run_id)
    _open(page, viewer, f"/runs/{run_id}")
    page.wait_for_selector("#run-samples tbody tr")
    cells = page.locator("#run-samples td[data-scorer=order_ref]").all_inner_texts()
    assert sorted(c.strip() for c in cells)[1:] == ["n/a", "n/a"], cells
    assert not any("error" in c for c in cells)
    caption = page.locator("figure.criterion figcaption").first
    caption.wait_for()
    assert "n=1, 2 n/a" in caption.inner_text()
    # the pass rate names the scorer it says little about
    assert "order_ref scored 1 of 3 samples (33%; n/a on 2)" in page.locator("#kpis").inner_text()
