"""A shared store: runs found by git branch, commit and host in SQL, and the baseline a name
picks (like-for-like first, and why), on both backends."""

from __future__ import annotations

import json
import socket
from typing import Any

import jsonschema
import pytest

from aieval._records import SampleRecord
from aieval.errors import RunNotFoundError
from aieval.report import (
    compare_runs,
    comparison_schema,
    render_github,
    render_json,
    render_markdown,
)
from aieval.store import BaselineChoice, Store
from aieval.store._schema import SCHEMA_VERSION

V3, V2 = "3" * 32, "2" * 32


def _run(
    store: Store,
    name: str = "qa",
    *,
    branch: str | None = "main",
    sha: str | None = "1a2b3c4d5e",
    limit: int | None = None,
    version: str = V3,
    status: str = "completed",
) -> str:
    config: dict[str, Any] = {"dataset": {"source": "qa.jsonl", "limit": limit}}
    if branch is not None:
        config["git_branch"] = branch
    run_id = store.create_run(name=name, git_sha=sha, config=config, dataset_hash=version)
    samples = [
        SampleRecord(id=f"e{i}", index=i, input={"q": i}, expected="x", prediction="x")
        for i in range(3)
    ]
    store.record_samples(run_id, samples)
    store.finish_run(run_id, status=status, metrics={"samples": 3})
    return run_id


def test_runs_are_listed_by_branch_commit_and_host_in_sql(store_location: str) -> None:
    with Store(store_location) as store:
        on_main = _run(store, branch="main", sha="abcdef0123")
        on_feature = _run(store, branch="feature/x", sha="abc1230000")
        unknown = _run(store, branch=None, sha=None)
        ids = lambda **kw: [r.id for r in store.list_runs(**kw)]  # noqa: E731
        assert ids(branch="main") == [on_main]
        assert ids(branch="feature/x") == [on_feature]
        assert ids(commit="abc") == [on_feature, on_main]
        assert ids(commit="ABCDEF") == [on_main]  # git ids are lowercase
        assert ids(commit="abc_") == []  # LIKE's wildcards are literal
        assert ids(host=socket.gethostname()) == [unknown, on_feature, on_main]
        assert ids(host="elsewhere") == []
        assert store.count_runs(branch="main") == 1
        assert store.count_runs(commit="abc", host=socket.gethostname()) == 2
        run = store.get_run(on_feature)
        assert (run.git_branch, run.host, run.dataset_limit) == (
            "feature/x",
            socket.gethostname(),
            None,
        )
        # the filter runs in SQL: a run whose config cannot be read is never loaded by it
        store._write("UPDATE runs SET config = '{not json' WHERE id = ?", (unknown,))
        assert ids(branch="main") == [on_main]
        with pytest.raises(ValueError):
            store.list_runs()


def test_runs_stored_before_version_6_gain_branch_and_limit_from_their_config(
    store_location: str,
) -> None:
    with Store(store_location) as store:
        full = _run(store, branch="main")
        limited = _run(store, branch="dev", limit=50)
        bare = _run(store, branch=None)
        broken = _run(store, branch="main")
        store._write("UPDATE runs SET config = '{broken' WHERE id = ?", (broken,))
        # as version 5 left them: the columns empty, and no host recorded (version 1)
        store._write("UPDATE runs SET git_branch = NULL, dataset_limit = NULL, host = NULL", ())
        store._write("UPDATE meta SET value = '5' WHERE key = 'schema_version'", ())
    with Store(store_location) as store:
        version = store._read_one("SELECT value FROM meta WHERE key = 'schema_version'")
        assert version == (str(SCHEMA_VERSION),)
        assert [r.id for r in store.list_runs(branch="main")] == [full]
        assert [r.id for r in store.list_runs(branch="dev")] == [limited]
        assert store._read_one("SELECT dataset_limit FROM runs WHERE id = ?", (limited,)) == (50,)
        assert store._read_one("SELECT git_branch FROM runs WHERE id = ?", (bare,)) == (None,)
        assert store.list_runs(host="anything") == []  # NULL host: matches no host
        assert store.get_run(full).host is None


def test_a_name_picks_the_latest_complete_run_and_says_what_it_skipped(
    store_location: str,
) -> None:
    with Store(store_location) as store:
        complete = _run(store)
        _run(store, limit=50)  # newer, but made with --limit
        _run(store, version=V2)  # newer, on another dataset version
        _run(store, status="failed")  # newer, did not complete
        candidate = store.get_run(_run(store, branch="feature"))
        choice = store.baseline_for("qa", candidate)
        assert isinstance(choice, BaselineChoice)
        assert choice.run.id == complete
        assert choice.warning is None
        assert sorted(choice.skipped) == [
            (1, "made with --limit 50"),
            (1, "not completed"),
            (1, f"on dataset version {V2[:12]}"),
        ]
        line = choice.line()
        assert line.startswith(f"baseline: run {complete} (main@1a2b3c4, ")
        assert f"the latest complete run of 'qa' on dataset version {V3[:12]}" in line
        assert "skipped 3 newer runs" in line and "WARNING" not in line
        # given by id, it is that run, and no choice was made
        assert store.baseline_for(complete[:-2], candidate).id == complete  # type: ignore[union-attr]


def test_when_only_a_limited_run_exists_it_is_picked_with_a_warning(
    store_location: str,
) -> None:
    with Store(store_location) as store:
        limited = _run(store, limit=20)
        candidate = store.get_run(_run(store, name="qa-new"))
        store._write("UPDATE runs SET name = 'qa' WHERE id = ?", (candidate.id,))
        choice = store.baseline_for("qa", candidate)
        assert isinstance(choice, BaselineChoice)
        assert choice.run.id == limited
        assert choice.warning is not None and "--limit 20" in choice.warning
        assert f"WARNING: no complete run of 'qa' on the whole of dataset version {V3[:12]}" in (
            choice.line()
        )
        data = json.loads(render_json(compare_runs(store, "qa", candidate.id)))
        jsonschema.validate(data, comparison_schema())
        for rendered in (render_markdown(data), render_github(data)):
            assert "> ⚠️ baseline: run" in rendered and "WARNING: no complete run" in rendered
        assert data["baseline"]["id"] == limited
        assert data["baseline_choice"]["run_id"] == limited
        assert "--limit 20" in data["baseline_choice"]["warning"]
        assert "baseline_choice" not in compare_runs(store, limited, candidate.id).to_dict()


def test_a_named_baseline_with_no_other_run_is_refused(store_location: str) -> None:
    with Store(store_location) as store:
        only = store.get_run(_run(store))
        with pytest.raises(RunNotFoundError, match="no earlier run named 'qa' other than"):
            store.baseline_for("qa", only)
