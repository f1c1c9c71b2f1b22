"""The viewer's run page labels tokens as the CLI does: target, judges, total, and a total
some calls did not report as unknown (Chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.browser import PageWatch, require_chromium, watched_page

require_chromium()

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
#: the second row's model call reported no usage
UNREPORTED = [
    row | {"recorded_calls": [{"provider": "openai", "model": "m"}]} if n == 1 else row
    for n, row in enumerate(ROWS)
]


@pytest.fixture(scope="module")
def token_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dict[str, tuple[str, str]]]]:
    """The viewer's address, and each run's id and CLI line by name."""
    root: Path = tmp_path_factory.mktemp("tokens-viewer")
    db = root / "runs.db"
    runs = {}
    for name, rows in (("tokens", ROWS), ("unreported", UNREPORTED)):
        result = run(name=name, dataset=rows, scorers=["exact_match"], store=str(db))
        with Store(db) as store:
            runs[name] = (
                result.id,
                format_tokens(build_report(store, result.id).to_dict()["tokens"]),
            )
    app = server_api.create_app(db, server_api.ServerSettings(dataset_roots=(root,)))
    try:
        with LiveServer(app) as live:
            yield live.url, runs
    finally:
        app.state.manager.shutdown()


def _facts(request: pytest.FixtureRequest, url: str, run_id: str) -> str:
    """The run page's latency, tokens and cost facts."""
    with watched_page(request.getfixturevalue("browser"), PageWatch(console=False)) as page:
        page.goto(f"{url}/#/runs/{run_id}")
        facts = page.locator("dl.facts", has_text="Tokens in/out")
        facts.wait_for(timeout=120_000)  # the report builds in the background
        text: str = facts.inner_text()
    return text


def test_run_page_labels_tokens_like_the_cli(
    request: pytest.FixtureRequest, token_run: tuple[str, dict[str, tuple[str, str]]]
) -> None:
    url, runs = token_run
    run_id, cli_line = runs["tokens"]
    assert cli_line == "tokens in/out target 30/9 · total 30/9"
    assert "target 30/9 · total 30/9" in _facts(request, url, run_id)


def test_run_page_reads_a_total_some_calls_did_not_report_as_unknown(
    request: pytest.FixtureRequest, token_run: tuple[str, dict[str, tuple[str, str]]]
) -> None:
    url, runs = token_run
    run_id, cli_line = runs["unreported"]
    part = "at least 20/6 (1 of 3 calls unreported)"
    line = f"target {part} · total {part}"
    assert cli_line == "tokens in/out " + line
    assert line in _facts(request, url, run_id)
