"""Who may write which run through a server's uploads, and which run is the newest of its name:
each attack on a real server on 127.0.0.1, over each store backend in turn.

The server has its own token (``ADMIN``) and two upload tokens, one per team.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.push.helpers import make_interrupted_run, make_run, resume_run, rows, sample_count
from tests.server.conftest import AppFactory
from tests.support.server import LiveServer

from aieval import run
from aieval.errors import ConfigError, PushError
from aieval.push import ServerTarget, push_runs, run_in, sample_in
from aieval.scorers import exact_match
from aieval.server import ServerSettings
from aieval.store import Store

ADMIN = "rights-admin-token-0123456789abcdef"
TEAMS = {"team-a": "team-a-token-0123456789abcdef", "team-b": "team-b-token-0123456789abcdef"}
A, B = TEAMS["team-a"], TEAMS["team-b"]


@pytest.fixture
def server(make_app: AppFactory) -> Iterator[LiveServer]:
    with LiveServer(make_app(token=ADMIN, upload_tokens=TEAMS)) as live:
        yield live


def push(source: Path, url: str, token: str, *refs: str) -> Any:
    target = ServerTarget(url, token)
    try:
        with Store(source) as src:
            return push_runs(src, target, refs)
    finally:
        target.close()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _post(url: str, token: str, body: dict[str, Any]) -> httpx.Response:
    headers = {**_auth(token), "Content-Type": "application/json"}
    return httpx.post(
        f"{url}/api/runs/import", content=json.dumps(body), headers=headers, timeout=60
    )


def _held(url: str, token: str, run_id: str) -> httpx.Response:
    return httpx.get(
        f"{url}/api/runs/import/holding",
        params={"run_id": run_id},
        headers=_auth(token),
        timeout=60,
    )


def _commit(url: str, token: str, run: dict[str, Any], held: str | None, parts: int = 0) -> Any:
    body = {"version": 1, "upload": uuid.uuid4().hex, "parts": parts, "run": run}
    return _post(url, token, {**body, **({"held": held} if held else {})})


def _stored(team: str, run_id: str) -> tuple[Any, ...]:
    with Store(team) as store:
        return store.get_run(run_id), sample_count(team, run_id)


REWRITE = {"name": "qa-evil", "status": "failed", "model": "evil", "metrics": {"pass_rate": 1.0}}


def test_a_team_token_cannot_read_or_rewrite_another_teams_run(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "a.db"
    run_id = make_run(src, "qa", 4)
    assert push(src, server.url, A).count("new") == 1
    before = _stored(server_store, run_id)
    seen = _held(server.url, B, run_id)
    assert seen.status_code == 403 and f"run {run_id} is not one" in seen.json()["message"]
    assert "team-b" in seen.json()["message"] and "qa" not in seen.text
    held = _held(server.url, ADMIN, run_id).json()  # the digest, as if it had leaked
    run = {**held["run"], **REWRITE}
    answer = _commit(server.url, B, run, held["held"])
    assert answer.status_code == 403, answer.text
    assert f"run {run_id} is not one upload token 'team-b' may write" in answer.text
    assert _stored(server_store, run_id) == before


def test_a_team_token_cannot_add_samples_to_another_teams_run(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "a.db"
    run_id = make_run(src, "qa", 4)
    push(src, server.url, A)
    before = _stored(server_store, run_id)
    with Store(src) as store:
        run = run_in(store.get_run(run_id))
        extra = {**sample_in(next(iter(store.stored_samples(run_id)))), "sample_id": "planted"}
    upload = uuid.uuid4().hex
    part = {"version": 1, "upload": upload, "part": 0, "samples": [extra]}
    assert _post(server.url, B, part).status_code == 200
    answer = _post(server.url, B, {"version": 1, "upload": upload, "parts": 1, "run": run})
    assert answer.status_code == 403 and f"run {run_id} is not one" in answer.text
    assert "qa" not in answer.text
    assert _stored(server_store, run_id) == before
    with pytest.raises(PushError, match=rf"run {run_id}.*403"):
        push(src, server.url, B)  # the client says so too, naming the run


def test_no_token_rewrites_a_stored_runs_header(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "a.db"
    run_id = make_run(src, "qa", 4)
    push(src, server.url, ADMIN)
    before = _stored(server_store, run_id)
    for token in (ADMIN, A):  # the server's own token too: what a stored run is stays
        held = _held(server.url, token, run_id)
        if token == A:  # not team A's run (the server's token wrote it)
            assert held.status_code == 403
            continue
        run = {**held.json()["run"], **REWRITE}
        answer = _commit(server.url, token, run, held.json()["held"])
        assert answer.status_code == 409, answer.text
        message = answer.json()["message"]
        assert f"run {run_id} (qa): the header at this server's store differs" in message
        assert "name, status, model, metrics" in message
    assert _stored(server_store, run_id) == before


def test_a_teams_resumed_run_is_brought_up_to_date_by_its_own_token(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "a.db"
    run_id = make_interrupted_run(src, "long", 12, stop_after=5)
    assert push(src, server.url, A).samples == 5
    resume_run(src, "long", 12)
    with pytest.raises(PushError, match="403"):
        push(src, server.url, B)
    again = push(src, server.url, A)
    assert (again.count("updated"), again.samples) == (1, 7)
    assert _stored(server_store, run_id)[0].status == "completed"
    with Store(server_store) as team:
        assert team.run_holding(run_id).pushed_by == "team-a"  # type: ignore[union-attr]
    # completed there: its header is final, even for the token that made it
    held = _held(server.url, A, run_id).json()
    answer = _commit(server.url, A, {**held["run"], "status": "failed"}, held["held"])
    assert answer.status_code == 409 and "in status, which a push may not change" in answer.text


def test_an_upload_token_reaches_only_the_upload_endpoints(
    server: LiveServer, tmp_path: Path
) -> None:
    for path in ("/api/runs", "/api/runs/x", "/"):
        answer = httpx.get(f"{server.url}{path}", headers=_auth(A), timeout=60)
        assert answer.status_code == 403, path
        assert "upload token 'team-a' may only upload runs" in answer.text
    assert httpx.get(f"{server.url}/?token={A}", timeout=60).status_code == 401  # no viewer cookie
    assert httpx.get(f"{server.url}/api/runs", headers=_auth(ADMIN), timeout=60).status_code == 200


@pytest.mark.parametrize(
    ("tokens", "problem"),
    [
        pytest.param({"../x": "t1"}, "upload token name '../x'", id="name"),
        pytest.param({"a": ""}, "upload token 'a' must not be empty", id="empty"),
        pytest.param({"a": "same", "b": "same"}, "must differ", id="twice"),
        pytest.param({"a": ADMIN}, "must differ", id="admin's"),
    ],
)
def test_upload_tokens_are_checked_at_start(tokens: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        ServerSettings(token=ADMIN, upload_tokens=tokens).check()
    with pytest.raises(ConfigError, match="need the server's own token"):
        ServerSettings(upload_tokens={"a": "t1"}).check()


def _shift_created(source: Path, run_id: str, by_s: float) -> None:
    with sqlite3.connect(source) as db:
        db.execute("UPDATE runs SET created_at = created_at + ? WHERE id = ?", (by_s, run_id))


@pytest.mark.parametrize("field", ["created_at", "finished_at", "started_at"])
def test_a_time_in_the_future_is_a_422_naming_the_field(
    server: LiveServer, tmp_path: Path, server_store: str, field: str
) -> None:
    src = tmp_path / "a.db"
    run_id = make_run(src, "qa", 2)
    with Store(src) as store:
        run = {**run_in(store.get_run(run_id)), field: 1e11}
    answer = _commit(server.url, ADMIN, run, None)
    assert answer.status_code == 422, answer.text
    assert any(r.startswith(f"run.{field}: ") and "ahead of" in r for r in answer.json()["reasons"])
    with Store(server_store) as team:
        assert team.run_holding(run_id) is None


def test_a_sample_time_in_the_future_is_a_422_naming_it(server: LiveServer, tmp_path: Path) -> None:
    src = tmp_path / "a.db"
    run_id = make_run(src, "qa", 2)
    with Store(src) as store:
        samples = [sample_in(s) for s in store.stored_samples(run_id)]
    samples[1]["created_at"] = time.time() + 3600
    body = {"version": 1, "upload": uuid.uuid4().hex, "part": 0, "samples": samples}
    answer = _post(server.url, ADMIN, body)
    assert answer.status_code == 422
    assert any(r.startswith("samples.1.created_at: ") for r in answer.json()["reasons"])


def test_the_baseline_is_the_run_the_store_received_last_not_the_one_dated_latest(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "a.db"
    early = make_run(src, "qa", 2)
    _shift_created(src, early, 240)  # dated ahead, within the clocks' skew: taken
    assert push(src, server.url, A).count("new") == 1
    later = make_run(src, "qa", 3)  # made and stored after it, dated before it
    assert push(src, server.url, A).count("new") == 1
    with Store(server_store) as team:
        assert team.get_run(early).created_at > team.get_run(later).created_at
        assert team.get_run("qa").id == later
        assert [r.id for r in team.list_runs(name="qa")] == [later, early]
        candidate = make_run(server_store, "qa", 2)
        assert team.get_run("qa", exclude=candidate).id == later  # the comparison's baseline


def test_an_old_run_pushed_late_keeps_its_place(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    first = make_run(old, "qa", 2)
    second = make_run(new, "qa", 2)
    push(new, server.url, A)
    push(old, server.url, A)  # received last, but made first: not the newest
    with Store(server_store) as team:
        assert team.get_run("qa").id == second
        assert team.get_run(first).created_at < team.get_run(second).created_at


def _header_of(source: Path, run_id: str, **changes: Any) -> dict[str, Any]:
    with Store(source) as store:
        return {**run_in(store.get_run(run_id)), **changes}


def test_an_upload_token_pushes_only_run_ids_of_aievals_shape(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    theirs, mine = tmp_path / "b.db", tmp_path / "a.db"
    real = make_run(theirs, "search-prod", 2)
    push(theirs, server.url, B)
    own = make_run(mine, "a-thing", 2)
    # an id equal to, or starting with, another team's name; one sharing a prefix with its id
    for forged in ("search-prod", "search-prod-evil", real[:-1], f"{real}0", "../x"):
        answer = _commit(server.url, A, _header_of(mine, own, id=forged), None)
        assert answer.status_code == 422, answer.text
        assert answer.json()["message"].startswith("run.id: an upload token pushes only runs")
        held = _held(server.url, A, forged)
        assert held.status_code == 422 and held.json()["message"].startswith("run_id: ")
    with Store(server_store) as team:
        assert team.get_run("search-prod").id == real
        assert team.get_run(real[:-3]).id == real
        assert [r.id for r in team.list_runs()] == [real]
    page = httpx.get(f"{server.url}/api/runs/search-prod/header", headers=_auth(ADMIN), timeout=60)
    assert page.json()["run"]["id"] == real
    # a run given an id of its own (``run(run_id=...)``): the server's own token pushes it
    named = tmp_path / "named.db"
    run(name="nightly", dataset=rows(1), scorers=[exact_match], store=named, run_id="nightly-1")
    with pytest.raises(PushError, match=r"422: run_id: an upload token pushes only runs"):
        push(named, server.url, A)
    assert push(named, server.url, ADMIN).count("new") == 1


def test_a_name_belongs_to_the_token_whose_runs_it_holds(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    a, b, admin = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "admin.db"
    baseline = make_run(a, "support-bot", 2)
    assert push(a, server.url, A).count("new") == 1
    make_run(b, "support-bot", 2, wrong_every=1)  # team B's worse run under team A's name
    with pytest.raises(
        PushError, match=r"403: run name 'support-bot' holds runs that upload token 'team-b'"
    ):
        push(b, server.url, B)
    make_run(admin, "nightly", 2)  # the server's own history: no upload token adds to it
    assert push(admin, server.url, ADMIN).count("new") == 1
    make_run(a, "nightly", 2)
    with pytest.raises(
        PushError, match=r"403: run name 'nightly' holds runs that upload token 'team-a'"
    ):
        push(a, server.url, A)
    make_run(admin, "support-bot", 2)  # the server's token may add to any name
    assert push(admin, server.url, ADMIN).count("new") == 1
    latest = make_run(a, "support-bot", 2)  # and the name stays team A's
    assert push(a, server.url, A, latest).count("new") == 1
    with Store(server_store) as team:
        stored = {r.id: r.name for r in team.list_runs(limit=100)}
        assert sorted(stored.values()) == ["nightly"] + ["support-bot"] * 3  # none of B's
        assert team.get_run("support-bot").id == latest
        candidate = make_run(server_store, "support-bot", 2)
        assert team.get_run("support-bot", exclude=candidate).id == latest
    assert baseline in stored


def test_a_run_id_taken_by_another_token_is_refused_alike_and_names_nothing_of_it(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "a.db"
    run_id = make_run(src, "qa", 2)
    fake = _header_of(src, run_id, name="b-secret-project", metrics={"pass_rate": 0.0})
    assert _commit(server.url, B, fake, None).status_code == 200  # squatted before A's push
    with pytest.raises(PushError) as refused:
        push(src, server.url, A)
    message = str(refused.value)
    assert f"run {run_id} is not one upload token 'team-a' may write" in message
    assert "make it anew" in message and "b-secret-project" not in message
    unknown = f"{run_id[:-8]}00000000"
    assert _held(server.url, A, unknown).json()["run"] is None  # a new id: A may push it
    # another token's run and the server's own: the same refusal, nothing of either shown
    admins = make_run(tmp_path / "admin.db", "admins", 2)
    push(tmp_path / "admin.db", server.url, ADMIN)
    for held in (_held(server.url, A, run_id), _held(server.url, A, admins)):
        assert held.status_code == 403
        assert "secret" not in held.text and "admins" not in held.text
        assert "this server holds a run of that id that the token did not create" in held.text
    with Store(server_store) as team:
        assert team.get_run(run_id).name == "b-secret-project"


def test_two_tokens_first_runs_of_one_name_at_once_one_is_refused(
    server: LiveServer, tmp_path: Path, server_store: str
) -> None:
    src = tmp_path / "a.db"
    runs = {token: make_run(src, "fresh", 1) for token in (A, B)}
    start, answers = threading.Barrier(2), dict[str, httpx.Response]()

    def commit(token: str) -> None:
        start.wait()
        answers[token] = _commit(server.url, token, _header_of(src, runs[token]), None)

    threads = [threading.Thread(target=commit, args=(token,)) for token in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    codes = sorted(answer.status_code for answer in answers.values())
    assert codes == [200, 403], [answer.text for answer in answers.values()]
    with Store(server_store) as team:
        assert team.count_runs(name="fresh") == 1
