"""``push --to http://...``: runs uploaded to a real server on 127.0.0.1, validated, idempotent.

The server's store (``server_store``) is each backend in turn: an SQLite file, then PostgreSQL.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import socket
import sqlite3
import sys
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from tests.push.helpers import (
    cli,
    make_interrupted_run,
    make_run,
    record_odd_run,
    resume_run,
    same_comparison,
    same_reports,
    same_rows,
    sample_count,
)
from tests.server.conftest import AppFactory
from tests.support.server import LiveServer

from aieval.errors import PushError
from aieval.push import ServerTarget, StoreTarget, push_runs, run_in, sample_in
from aieval.store import RunHolding, Store

TOKEN = "push-test-token-0123456789abcdef"


@pytest.fixture
def server(make_app: AppFactory) -> Iterator[LiveServer]:
    """A server with a token, over ``server_store`` (see ``make_app``)."""
    with LiveServer(make_app(token=TOKEN)) as live:
        yield live


def push(source: Path, url: str, *refs: str, token: str | None = TOKEN, **kw: Any) -> Any:
    target = ServerTarget(url, token, **kw)
    try:
        with Store(source) as src:
            return push_runs(src, target, refs)
    finally:
        target.close()


def test_push_through_the_server_is_exact_and_idempotent(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src, team = tmp_path / "local.db", server_store
    base = make_run(src, "qa", 30, wrong_every=3)
    cand = make_run(src, "qa", 30, wrong_every=4)
    record_odd_run(Store(src), "odd")
    first = push(src, server.url, part_samples=7)  # several parts per run
    assert (first.count("new"), first.samples) == (3, 65)
    same_rows(src, team)
    with Store(src) as a, Store(team) as b:
        same_reports(a, b, base)
        same_comparison(a, b, base, cand)
    second = push(src, server.url)
    assert (second.count("unchanged"), second.samples) == (3, 0)
    same_rows(src, team)


def test_a_resumed_run_is_updated_through_the_server(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src, team = tmp_path / "local.db", server_store
    run_id = make_interrupted_run(src, "long", 25, stop_after=10)
    assert push(src, server.url).samples == 10
    resume_run(src, "long", 25)
    again = push(src, server.url)
    assert (again.count("updated"), again.samples) == (1, 15)
    same_rows(src, team)
    report = httpx.get(f"{server.url}/api/runs/{run_id}", headers=_auth(), timeout=60).json()
    assert report["run"]["status"] == "completed"


def test_a_run_resumed_on_both_sides_is_refused_through_the_server(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src, team = tmp_path / "local.db", server_store
    run_id = make_interrupted_run(src, "fork", 12, stop_after=5)
    assert push(src, server.url).samples == 5
    resume_run(team, "fork", 12)
    resume_run(src, "fork", 12, prefix="wrong ")
    with Store(team) as held:
        before = (held.get_run(run_id), list(held.stored_samples(run_id)))
    with pytest.raises(PushError, match=rf"run {run_id} \(fork\): .* 7 sample\(s\) .* differ"):
        push(src, server.url)
    with Store(team) as held:
        assert (held.get_run(run_id), list(held.stored_samples(run_id))) == before


class _WriterInBetween(ServerTarget):
    """A server target where another writer changes the run on the server's store after the
    push compared it and before the commit."""

    def __init__(self, url: str, between: Callable[[], None]) -> None:
        super().__init__(url, TOKEN)
        self.between: Callable[[], None] | None = between

    def holding(self, run_id: str) -> RunHolding | None:
        held = super().holding(run_id)
        if self.between is not None:  # once: the push's second comparison sees it done
            self.between()
            self.between = None
        return held


@pytest.mark.parametrize("case", ["resumed", "written"])
def test_a_writer_between_the_comparison_and_the_commit_is_compared_anew(
    server: LiveServer, tmp_path: Path, server_store: str, case: str
) -> None:
    src, team = tmp_path / "local.db", server_store
    if case == "resumed":  # the team's copy is resumed there, adding samples the push lacks
        run_id = make_interrupted_run(src, "race", 10, stop_after=4)
        assert push(src, server.url).samples == 4
        resume_run(src, "race", 10)

        def between() -> None:
            resume_run(team, "race", 10, prefix="other ")

    else:  # the run is absent there when compared, then written by another writer
        run_id = make_run(src, "race", 6)

        def between() -> None:
            with Store(src) as source, Store(team) as there:
                there.import_run(source.get_run(run_id), list(source.stored_samples(run_id)))

    with Store(team) as held:
        get_ready = held.get_run(run_id) if case == "resumed" else None
    with Store(src) as source:
        target = _WriterInBetween(server.url, between)
        if case == "resumed":  # compared anew after the server's 409: the copies differ
            differ = rf"run {run_id} \(race\): .* 6 sample\(s\) .* differ"
            with pytest.raises(PushError, match=differ):
                push_runs(source, target)
        else:  # compared anew: the other writer wrote this very copy
            assert push_runs(source, target).count("unchanged") == 1
        target.close()
    with Store(team) as held:  # the other writer's run, as it left it
        assert held.get_run(run_id) != get_ready
        samples = list(held.stored_samples(run_id))
        assert len(samples) == (10 if case == "resumed" else 6)
        if case == "resumed":
            assert sum((s.prediction or "").startswith("other ") for s in samples) == 6
    if case == "written":  # compared anew, the same run there: nothing to write
        assert push(src, server.url).count("unchanged") == 1


def test_the_token_is_required(server: LiveServer, tmp_path: Path, server_store: str) -> None:
    src = tmp_path / "local.db"
    run_id = make_run(src, "qa", 2)
    with pytest.raises(PushError, match=rf"run {run_id}.*401.*--token or AIEVAL_TOKEN") as none:
        push(src, server.url, token=None)
    assert "needs a token" in str(none.value) and "not accepted" not in str(none.value)
    with pytest.raises(PushError, match=r"401: the token was not accepted\); give") as wrong:
        push(src, server.url, token="wrong")
    assert TOKEN not in str(wrong.value)
    with Store(server_store) as team:
        assert team.run_holding(run_id) is None


def test_a_server_without_a_token_refuses_uploads(make_app: AppFactory, tmp_path: Path) -> None:
    src = tmp_path / "local.db"
    make_run(src, "qa", 2)
    with LiveServer(make_app()) as live, pytest.raises(PushError, match=r"403.*only with a token"):
        push(src, live.url, token=None)


@pytest.mark.slow
def test_the_command_pushes_with_the_token_from_the_environment(
    server: LiveServer, tmp_path: Path
) -> None:
    src = tmp_path / "local.db"
    make_run(src, "qa", 3)
    env = {**os.environ, "AIEVAL_TOKEN": TOKEN}
    done = cli("push", "--db", str(src), "--to", server.url, env=env)
    assert done.returncode == 0, done.stderr
    assert f"pushed 1 run to {server.url}: 1 new" in done.stdout
    assert TOKEN not in done.stdout + done.stderr
    refused = cli("push", "--db", str(src), "--to", server.url, env={**env, "AIEVAL_TOKEN": ""})
    assert refused.returncode == 1 and "401" in refused.stderr


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def _upload(source: Path, run_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with Store(source) as store:
        return run_in(store.get_run(run_id)), [sample_in(s) for s in store.stored_samples(run_id)]


def _post(url: str, body: Any) -> httpx.Response:
    content = body if isinstance(body, str) else json.dumps(body)
    headers = {**_auth(), "Content-Type": "application/json"}
    return httpx.post(f"{url}/api/runs/import", content=content, headers=headers, timeout=60)


def _sample(k: int, **change: Any) -> Any:
    return lambda body: body["samples"][k].update(change)


NAN = float("nan")
BAD_PARTS = {
    "idx": (_sample(1, idx="one"), "samples.1.idx"),
    "input": (_sample(0, input="{not json"), "samples.0.input: Value error, not JSON"),
    "verdict": (_sample(0, verdict='{"passed": "maybe"}'), "samples.0: Value error, verdict"),
    "nan": (
        lambda b: b["samples"][0]["scores"][0].update(value=NAN),
        "samples.0.scores.0.value: Input should be a finite number",
    ),
    "inf": (_sample(2, latency_s=float("inf")), "samples.2.latency_s: Input should be a finite"),
    "tokens": (_sample(1, input_tokens=2**64), "samples.1.input_tokens: Input should be less"),
    "call": (
        lambda b: b["samples"][0]["calls"].append({"purpose": ""}),
        "samples.0.calls.0.purpose",
    ),
    "extra": (_sample(0, colour="red"), "samples.0.colour: Extra inputs"),
    "version": (lambda b: b.update(version=2), "version: Value error, this server reads upload"),
    "upload": (lambda b: b.update(upload="../../etc"), "upload: String should match pattern"),
    "twice": (lambda b: b["samples"].append(dict(b["samples"][0])), "sample id 'q0' given twice"),
    "held": (lambda b: b.update(held="0" * 64), "held: only a commit carries it"),
}


@pytest.mark.parametrize(("change", "field"), BAD_PARTS.values(), ids=BAD_PARTS.keys())
def test_a_bad_part_is_refused_naming_the_field(
    server: LiveServer, tmp_path: Path, change: Any, field: str
) -> None:
    src = tmp_path / "local.db"
    run_id = make_run(src, "qa", 3)
    _, samples = _upload(src, run_id)
    body = {"version": 1, "upload": uuid.uuid4().hex, "part": 0, "samples": samples}
    change(body)
    answer = _post(server.url, body)  # Python's JSON writes NaN and Infinity: refused by field
    assert answer.status_code == 422, answer.text
    assert any(field in reason for reason in answer.json()["reasons"]), answer.json()


def test_a_bad_commit_is_refused_naming_the_field(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "local.db"
    run_id = make_run(src, "qa", 3)
    run, _ = _upload(src, run_id)
    upload = uuid.uuid4().hex
    for change, field in [
        ({"status": "running"}, "run.status"),
        ({"config": "{}"}, "run.config"),
        ({"n_examples": -1}, "run.n_examples"),
        ({"held": "not-a-digest"}, "held"),
    ]:
        held = {"held": change.pop("held")} if "held" in change else {}
        body = {"version": 1, "upload": upload, "parts": 0, "run": {**run, **change}, **held}
        answer = _post(server.url, body)
        assert answer.status_code == 422 and any(
            r.startswith(field) for r in answer.json()["reasons"]
        ), answer.text
    assert _post(server.url, "[1, 2").status_code == 400
    assert _post(server.url, '{"version": 1, "version": 1}').status_code == 422
    missing = _post(server.url, {"version": 1, "upload": upload, "parts": 2, "run": run})
    assert missing.status_code == 422
    assert "parts: part 0 of 2 was never received" in missing.json()["message"]
    with Store(server_store) as team:
        assert team.run_holding(run_id) is None


def test_an_interrupted_upload_is_retried_without_duplicates(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src, team = tmp_path / "local.db", server_store
    run_id = make_run(src, "big", 60)
    run, samples = _upload(src, run_id)
    upload = uuid.uuid4().hex
    parts = [samples[:25], samples[25:50], samples[50:]]
    for k, part in enumerate(parts[:2]):
        assert _post(
            server.url, {"version": 1, "upload": upload, "part": k, "samples": part}
        ).is_success
    # the connection dropped here: nothing of the run is in the store yet
    with Store(team) as store:
        assert store.run_holding(run_id) is None
    # the client retries part 1 (its answer was lost), then sends the rest and commits
    for k in (1, 2):
        body = {"version": 1, "upload": upload, "part": k, "samples": parts[k]}
        assert _post(server.url, body).is_success
    commit = {"version": 1, "upload": upload, "parts": 3, "run": run}
    answer = _post(server.url, commit).json()
    assert answer == {"run_id": run_id, "outcome": "new", "samples_added": 60}
    assert _post(server.url, commit).json() == answer  # the commit's answer was lost: same
    same_rows(src, team)
    assert push(src, server.url).count("unchanged") == 1


def test_a_push_that_dies_mid_run_leaves_nothing_and_the_next_completes_it(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src, team = tmp_path / "local.db", server_store
    run_id = make_run(src, "big", 50)
    target = ServerTarget(server.url, TOKEN, part_samples=10)

    def dying(samples: Iterator[Any]) -> Iterator[Any]:
        for i, sample in enumerate(samples):
            if i == 35:
                raise OSError("the source disk went away")
            yield sample

    with Store(src) as store, pytest.raises(OSError):
        target.write(store.get_run(run_id), dying(store.stored_samples(run_id)), 50, _quiet)
    target.close()
    assert sample_count(team) == 0
    again = push(src, server.url, part_samples=10)
    assert (again.count("new"), again.samples) == (1, 50)
    same_rows(src, team)


def test_the_server_store_is_the_same_as_a_direct_push(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "local.db"
    make_run(src, "qa", 12)
    push(src, server.url)
    with Store(src) as store:
        push_runs(store, StoreTarget(Store(tmp_path / "direct.db")))
    same_rows(tmp_path / "direct.db", server_store)


def _quiet(*_: Any) -> None:
    return None


def _leaks(action: Callable[[], object]) -> list[str]:
    """The resource warnings (an unclosed session, connector, loop or socket) and asyncio error
    logs left once ``action`` ran and its objects were collected, warnings being errors."""
    gc.collect()  # what earlier tests left is not this action's
    seen: list[str] = []

    def unraisable(hook: Any) -> None:
        seen.append(f"{hook.exc_type.__name__}: {hook.exc_value}")

    handler = _Recorder()
    logging.getLogger("asyncio").addHandler(handler)
    previous = sys.unraisablehook
    sys.unraisablehook = unraisable
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with contextlib.suppress(Exception):
                action()
            gc.collect()
    finally:
        sys.unraisablehook = previous
        logging.getLogger("asyncio").removeHandler(handler)
    return seen + handler.messages


class _Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.mark.slow
def test_push_runs_to_a_server_leaves_no_open_session(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "local.db"
    make_run(src, "qa", 12)

    def documented() -> None:  # the docs' one line: the target is never closed
        with Store(src) as source:
            assert push_runs(source, ServerTarget(server.url, TOKEN, part_samples=5)).samples == 12

    def refused() -> None:  # a wrong token: the push raises
        with Store(src) as source, pytest.raises(PushError, match="401"):
            push_runs(source, ServerTarget(server.url, "wrong-token"))

    def closed() -> None:  # closed by the caller, then closed again
        target = ServerTarget(server.url, TOKEN)
        with Store(src) as source:
            push_runs(source, target)
        target.close()
        target.close()

    for action in (documented, refused, closed):
        assert _leaks(action) == [], action.__name__
    with Store(server_store) as team:
        assert team.count_samples(team.get_run("qa").id) == 12


@pytest.mark.slow
def test_an_unreachable_server_leaves_no_open_session(tmp_path: Path) -> None:
    src = tmp_path / "local.db"
    make_run(src, "qa", 2)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{free.getsockname()[1]}"  # nothing listens: refused

    def unreachable() -> None:
        with Store(src) as source, pytest.raises(PushError, match="did not answer"):
            push_runs(source, ServerTarget(url, TOKEN, attempts=1))

    assert _leaks(unreachable) == []


def test_a_lasting_store_failure_shows_the_servers_message(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "local.db"
    run_id = make_run(src, "qa", 3)
    if server_store.startswith("postgresql"):
        with psycopg.connect(server_store, autocommit=True) as conn:
            conn.execute(
                "CREATE FUNCTION frozen() RETURNS trigger LANGUAGE plpgsql AS"
                " $$ BEGIN RAISE EXCEPTION 'samples are frozen'; END $$"
            )
            conn.execute(
                "CREATE TRIGGER frozen BEFORE INSERT ON samples"
                " FOR EACH ROW EXECUTE FUNCTION frozen()"
            )
    else:
        with contextlib.closing(sqlite3.connect(server_store)) as db, db:
            db.execute(
                "CREATE TRIGGER frozen BEFORE INSERT ON samples BEGIN"
                " SELECT RAISE(ABORT, 'samples are frozen'); END"
            )
    # a store that fails is the server's outage (503 with Retry-After), not an internal error
    with pytest.raises(PushError, match=r"503: the store failed: .*samples are frozen") as failed:
        push(src, server.url, attempts=2)
    said = str(failed.value)
    assert "(after 2 attempts)" in said and "see the server log" not in said
    assert str(tmp_path) not in said  # the server's folders are its own
    with Store(server_store) as team:
        assert team.run_holding(run_id) is None
