"""Run names ``online/...`` are the server's own online scoring windows: an upload of that name,
with any token, is refused naming the field, and nothing is written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.push.helpers import make_run
from tests.server.conftest import AppFactory
from tests.support.server import LiveServer

from aieval.errors import PushError
from aieval.push import ServerTarget, push_runs
from aieval.store import Store

ADMIN = "windows-admin-token-0123456789abcdef"
TEAM = "windows-team-token-0123456789abcdef"


@pytest.fixture
def server(make_app: AppFactory) -> Iterator[LiveServer]:
    with LiveServer(make_app(token=ADMIN, upload_tokens={"team": TEAM})) as live:
        yield live


def test_an_upload_named_as_a_window_run_is_refused(
    server: LiveServer, server_store: str, tmp_path: Path
) -> None:
    source = tmp_path / "local.db"
    run_id = make_run(source, "online/quality/2026-11-30T05", 2)
    for token in (TEAM, ADMIN):
        target = ServerTarget(server.url, token)
        try:
            with Store(source) as src, pytest.raises(PushError) as refused:
                push_runs(src, target, [run_id])
        finally:
            target.close()
        assert "run.name: 'online/quality/2026-11-30T05': names starting with 'online/'" in str(
            refused.value
        )
    with Store(server_store) as stored:
        assert stored.list_runs() == []
