"""The viewer's run page shows a code evaluation's pass@k and per-problem drill-down (Chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.browser import ARTIFACTS, PageWatch, require_chromium, watched_page

require_chromium()

import httpx  # noqa: E402
from tests.support.server import LiveServer  # noqa: E402

import aieval.server as server_api  # noqa: E402
from aieval.code import evaluate_code  # noqa: E402
from aieval.sandbox import SandboxLimits  # noqa: E402

PROBLEMS = [
    {
        "task_id": "demo/add",
        "prompt": "def add(a, b):\n",
        "entry_point": "add",
        "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
    },
    {
        "task_id": "demo/neg",
        "prompt": "def neg(a):\n",
        "entry_point": "neg",
        "test": "def check(candidate):\n    assert candidate(2) == -2\n",
    },
]
COMPLETIONS = {
    "demo/add": ["    return a + b\n", "    return a - b\n"],
    "demo/neg": ["    return -a\n", "    return -a\n"],
}


@pytest.fixture(scope="module")
def code_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    root: Path = tmp_path_factory.mktemp("code-viewer")
    db = root / "runs.db"
    result = evaluate_code(
        PROBLEMS,
        n=2,
        k=[1, 2],
        completions=COMPLETIONS,
        allow_code_execution=True,
        limits=SandboxLimits(timeout=60, memory_mb=256),  # none may time out, however busy
        store=str(db),
    )
    app = server_api.create_app(db, server_api.ServerSettings(dataset_roots=(root,)))
    try:
        with LiveServer(app) as live, httpx.Client(base_url=live.url, timeout=20):
            yield live.url, result.run.id
    finally:
        app.state.manager.shutdown()


def test_run_page_shows_pass_at_k_and_each_problem(
    request: pytest.FixtureRequest, code_run: tuple[str, str]
) -> None:
    url, run_id = code_run
    with watched_page(request.getfixturevalue("browser"), PageWatch(console=False)) as page:
        page.goto(f"{url}/#/runs/{run_id}")
        page.wait_for_selector("#code-problems tbody tr")
        add = page.locator('#code-problems tr[data-problem="demo/add"]').inner_text()
        neg = page.locator('#code-problems tr[data-problem="demo/neg"]').inner_text()
        assert "1/2" in add and "2/2" in neg
        pass_at_1 = page.locator('#code-pass-at-k tr[data-k="1"]').inner_text()
        assert "0.750" in pass_at_1  # (1/2 + 2/2) / 2, the unbiased estimator per problem
        assert "4 executions" in page.locator("#code-eval").inner_text()
        assert "sandbox_error" in page.locator("#code-problems thead").inner_text()
        ARTIFACTS.mkdir(exist_ok=True)
        page.locator("#code-eval").screenshot(path=str(ARTIFACTS / "viewer-code-eval.png"))
        page.locator('#code-problems tr[data-problem="demo/add"] a').first.click()
        page.wait_for_selector("main[aria-busy=false]")
        assert page.url.endswith("/samples/demo%2Fadd%230")  # the first execution of demo/add
        assert page.locator("h1").inner_text() == "Sample demo/add#0"
