"""The viewer's run page labels tokens as the CLI does: target, judges, total (Chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

playwright_api = pytest.importorskip("playwright.sync_api")

from tests.server.test_viewer_browser import (  # noqa: E402
    VIEWPORT,
    browser,  # noqa: F401  (the shared Chromium fixture)
)
from tests.support.server import LiveServer  # noqa: E402

import aieval.server as server_api  # noqa: E402
from aieval import Store, run  # noqa: E402
from aieval._usage_figures import format_tokens  # noqa: E402
from aieval.report import build_report  # noqa: E402

CALL = {"provider": "openai", "model": "m", "input_tokens": 10, "output_tokens": 3}
ROWS = [
    {"id": f"r{i}", "prompt": "q", "expected": "x", "prediction": "x", "recorded_calls": [CALL]}
    for i in range(3)
]


@pytest.fixture(scope="module")
def token_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    root: Path = tmp_path_factory.mktemp("tokens-viewer")
    db = root / "runs.db"
    result = run(name="tokens", dataset=ROWS, scorers=["exact_match"], store=str(db))
    line = format_tokens(build_report(Store(db), result.id).to_dict()["tokens"])
    app = server_api.create_app(db, server_api.ServerSettings(dataset_roots=(root,)))
    try:
        with LiveServer(app) as live:
            yield live.url, result.id, line
    finally:
        app.state.manager.shutdown()


def test_run_page_labels_tokens_like_the_cli(
    request: pytest.FixtureRequest, token_run: tuple[str, str, str]
) -> None:
    url, run_id, cli_line = token_run
    assert cli_line == "tokens in/out target 30/9 · total 30/9"
    context = request.getfixturevalue("browser").new_context(viewport=VIEWPORT)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{url}/#/runs/{run_id}")
        facts = page.locator("dl.facts", has_text="Tokens in/out")
        facts.wait_for(timeout=120_000)  # the report builds in the background
        assert "target 30/9 · total 30/9" in facts.inner_text()
        assert not errors, errors
    finally:
        context.close()
