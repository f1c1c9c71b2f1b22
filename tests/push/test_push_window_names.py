"""Run names ``online/...`` are the server's own online scoring windows: the server's own token
may push them (its owner moving windows between stores); an upload token is refused naming the
field, and nothing is written. The API never starts a run of such a name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.push.helpers import make_run
from tests.server.conftest import AppFactory
from tests.support.server import LiveServer, rows_body

from aieval.errors import PushError
from aieval.push import ServerTarget, push_runs
from aieval.store import Store

ADMIN = "windows-admin-token-0123456789abcdef"
TEAM = "windows-team-token-0123456789abcdef"
WINDOW = "online/quality/2026-11-30T05"


@pytest.fixture
def server(make_app: AppFactory) -> Iterator[LiveServer]:
    with LiveServer(make_app(token=ADMIN, upload_tokens={"team": TEAM})) as live:
        yield live


def _push(server: LiveServer, source: Path, run_id: str, token: str) -> None:
    target = ServerTarget(server.url, token)
    try:
        with Store(source) as src:
            push_runs(src, target, [run_id])
    finally:
        target.close()


def test_an_upload_token_may_not_push_a_window_run(
    server: LiveServer, server_store: str, tmp_path: Path
) -> None:
    source = tmp_path / "local.db"
    run_id = make_run(source, WINDOW, 2)
    with pytest.raises(PushError) as refused:
        _push(server, source, run_id, TEAM)
    said = " ".join(str(refused.value).split())
    assert f"run.name: {WINDOW!r}: names starting with 'online/' are reserved" in said
    assert "server's own token" in said
    with Store(server_store) as stored:
        assert stored.list_runs() == []


def test_the_servers_own_token_moves_window_runs_between_stores(
    server: LiveServer, server_store: str, tmp_path: Path
) -> None:
    source = tmp_path / "local.db"
    run_id = make_run(source, WINDOW, 2)
    _push(server, source, run_id, ADMIN)
    with Store(server_store) as stored:
        assert [(r.id, r.name) for r in stored.list_runs()] == [(run_id, WINDOW)]
        assert len(list(stored.iter_samples(run_id))) == 2


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/evaluations", rows_body(2, name=WINDOW)),
        ("/api/traces/evaluations", {"name": WINDOW, "profile": "agent"}),
    ],
)
def test_the_api_starts_no_run_named_as_a_window(
    server: LiveServer, server_store: str, path: str, body: dict[str, object]
) -> None:
    answer = httpx.post(
        server.url + path, json=body, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=30
    )
    assert answer.status_code == 422, answer.text
    assert f"name: {WINDOW!r}: names starting with 'online/' are reserved" in answer.text
    with Store(server_store) as stored:
        assert stored.list_runs() == []
