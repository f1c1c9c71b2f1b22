"""The action's parts on their own: the comment marker, the outcome mapping, the GitHub context
read from the environment, and the baseline lookup through every page of runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aieval import run
from aieval.ci import ActionSettings, GitHubContext, find_baseline, marker
from aieval.ci._action import choose_baseline
from aieval.errors import ConfigError
from aieval.store import Store


@pytest.mark.parametrize("key", ["", "a--b", "x -->", "<b>", "k" * 101, "line\nbreak"])
def test_a_comment_key_that_could_break_the_marker_is_refused(key: str) -> None:
    with pytest.raises(ConfigError, match="comment key"):
        marker(key)


def test_marker_keys_tell_workflows_apart() -> None:
    assert marker("nightly-evals") != marker("aieval")
    assert marker("team/qa.v2") == "<!-- aieval:github-comment:team/qa.v2 -->"


@pytest.mark.parametrize(
    "checks",
    [
        {"promote": "pass", "block": "fail"},
        {"promote": "pass", "block": "fail", "inconclusive": "maybe"},
    ],
)
def test_an_incomplete_or_unknown_mapping_is_refused(checks: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="map each of promote, inconclusive, block"):
        ActionSettings(eval_files=(Path("e.yaml"),), checks=checks)  # type: ignore[arg-type]


def test_the_context_of_a_pull_request(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "pull_request": {"number": 12, "base": {"ref": "develop"}},
                "repository": {"default_branch": "main"},
            }
        )
    )
    context = GitHubContext.from_env(
        {
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_HEAD_REF": "feature",
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_RUN_ID": "99",
            "GITHUB_API_URL": "https://ghe.example.com/api/v3",
        }
    )
    assert (context.pull_request, context.base_branch, context.branch) == (12, "develop", "feature")
    assert context.baseline_branch == "develop"
    assert context.api_url == "https://ghe.example.com/api/v3"
    assert context.run_url == "https://github.com/o/r/actions/runs/99"


def test_the_context_of_a_push_and_outside_actions(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"repository": {"default_branch": "main"}}))
    push = GitHubContext.from_env(
        {"GITHUB_EVENT_PATH": str(event), "GITHUB_REF_TYPE": "branch", "GITHUB_REF_NAME": "rel"}
    )
    assert push.pull_request is None and push.baseline_branch == "rel"
    local = GitHubContext.from_env({})
    assert local.pull_request is None and local.baseline_branch is None
    assert local.api_url == "https://api.github.com"


def test_an_unreadable_event_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "event.json"
    bad.write_text("[1, 2]")
    with pytest.raises(ConfigError, match=r"event\.json: the event is not a JSON object"):
        GitHubContext.from_env({"GITHUB_EVENT_PATH": str(bad)})


def test_the_baseline_is_found_past_the_first_page_of_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    rows = [{"id": "a", "input": "q", "expected": "x", "prediction": "x"}]
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_REF_TYPE", "branch")
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    on_main = run(name="qa", dataset=rows, scorers=["exact_match"], store=db).id
    monkeypatch.setenv("GITHUB_REF_NAME", "other")
    for _ in range(105):  # more than a page of newer runs on another branch
        run(name="qa", dataset=rows, scorers=["exact_match"], store=db)
    store = Store(db)
    candidate = store.list_runs(name="qa", limit=1)[0]
    assert find_baseline(store, candidate, branch="main").id == on_main  # type: ignore[union-attr]
    assert find_baseline(store, candidate, branch="release") is None
    newest_other = find_baseline(store, candidate, branch=None)
    assert newest_other is not None and newest_other.id != candidate.id


def test_the_ci_baseline_is_the_latest_complete_run_not_a_newer_limited_one(
    store_location: str,
) -> None:
    def stored(branch: str, limit: int | None, model: str | None = "m") -> str:
        config = {"git_branch": branch, "dataset": {"limit": limit}}
        run_id = store.create_run(name="qa", model=model, config=config, dataset_hash="v3")
        store.finish_run(run_id, status="completed", metrics={"samples": 0})
        return run_id

    with Store(store_location) as store:
        complete = stored("main", None)
        stored("main", 50)  # newer, made with --limit 50
        stored("main", None, model="other")  # newer, another model
        candidate = store.get_run(stored("feature", None))
        assert find_baseline(store, candidate, branch="main").id == complete  # type: ignore[union-attr]
        choice = choose_baseline(store, candidate, branch="main")
        assert choice is not None and choice.warning is None
        assert choice.skipped == ((1, "made with --limit 50"),)
        store._write("UPDATE runs SET status = 'failed' WHERE id = ?", (complete,))
        loud = choose_baseline(store, candidate, branch="main")  # only the limited run is left
        assert loud is not None and loud.run.dataset_limit == 50
        assert loud.warning is not None and "--limit 50" in loud.warning
