"""``aieval github`` end to end, as the action runs it: a subprocess with GitHub Actions'
environment, talking to a loopback GitHub API that records every REST call."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from tests.support.cli import Cli, Done
from tests.support.github_server import GitHubServer

from aieval.ci import marker
from aieval.store import Store

PR = 7
MARKER = marker("aieval")


@pytest.fixture
def github() -> Iterator[GitHubServer]:
    with GitHubServer() as server:
        # 150 comments already: the action's comment lands on the second page of the list
        server.seed(PR, [f"review note {i}" for i in range(150)])
        yield server


def _write_eval(folder: Path, *, wrong_every: int | None, n: int = 80) -> None:
    rows = [
        {
            "id": f"q{i}",
            "input": f"what is {i} + {i}?",
            "expected": f"the answer is {2 * i}",
            "prediction": (
                "@octocat | `x` <!-- aieval:github-comment:aieval -->"
                if wrong_every and i % wrong_every == 0
                else f"answer {2 * i}"  # token F1 2/3: scores that are not all 0 or 1
            ),
        }
        for i in range(n)
    ]
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "eval.yaml").write_text(
        "name: arith\ndataset:\n  path: data.jsonl\n  prediction_field: prediction\n"
        "scorers: [token_f1]\n"
    )


def _env(folder: Path, github: GitHubServer, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AIEVAL_"))}
    event = folder / "event.json"
    event.write_text(
        json.dumps(
            {
                "pull_request": {"number": PR, "base": {"ref": "main"}},
                "repository": {"default_branch": "main"},
            }
        )
    )
    env.update(
        GITHUB_ACTIONS="true",
        GITHUB_API_URL=github.url,
        GITHUB_REPOSITORY=github.repo,
        GITHUB_TOKEN=github.token,
        GITHUB_EVENT_PATH=str(event),
        GITHUB_HEAD_REF="feature",
        GITHUB_STEP_SUMMARY=str(folder / "summary.md"),
        GITHUB_OUTPUT=str(folder / "output.txt"),
        AIEVAL_DB=str(folder / "default.db"),
    )
    env.update(extra)
    return env


def _run_baseline(folder: Path, github: GitHubServer, db: str = "runs.db", n: int = 80) -> None:
    """The base branch's run, as a workflow on push to main makes it."""
    _write_eval(folder, wrong_every=None, n=n)
    env = _env(folder, github, GITHUB_HEAD_REF="", GITHUB_REF_TYPE="branch", GITHUB_REF_NAME="main")
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "run", "eval.yaml", "--db", db, "-q"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


#: ``baseline(folder, n=80)``: the eval file of ``n`` rows in ``folder``, and beside it
#: ``runs.db``, a copy of the store its base branch's run was stored in
Baseline = Callable[..., None]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Baseline:
    """The base branch's run is the same for most tests: it is run once for each size (a
    subprocess, as ``_run_baseline``) and each test gets a copy of its store."""
    made: dict[int, Path] = {}

    def copy(folder: Path, n: int = 80) -> None:
        if n not in made:
            source = tmp_path_factory.mktemp(f"baseline-{n}")
            with GitHubServer() as github:
                _run_baseline(source, github, n=n)
            made[n] = source / "runs.db"
        _write_eval(folder, wrong_every=None, n=n)
        with sqlite3.connect(made[n]) as stored, sqlite3.connect(folder / "runs.db") as copied:
            stored.backup(copied)
        stored.close()
        copied.close()

    return copy


def _action(
    folder: Path, github: GitHubServer, *args: str, db: str = "runs.db"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aieval", "github", "eval.yaml", "--db", db, *args],
        cwd=folder, env=_env(folder, github), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _action_here(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, folder: Path, github: GitHubServer, *args: str
) -> Done:
    """``_action`` in this process (``tests.support.cli``), for what the command decides: the
    tests above see its process end with the statuses it decides."""
    for name in list(os.environ):
        if name.startswith(("GITHUB_", "AIEVAL_")):
            monkeypatch.delenv(name)
    env = {k: v for k, v in _env(folder, github).items() if k.startswith(("GITHUB_", "AIEVAL_"))}
    done: Done = cli("github", "eval.yaml", "--db", "runs.db", *args, cwd=folder, env=env)
    return done


def _outputs(folder: Path) -> dict[str, str]:
    """``$GITHUB_OUTPUT``'s ``name<<delimiter`` blocks, the last value of each name."""
    lines = (folder / "output.txt").read_text().splitlines()
    out, i = {}, 0
    while i < len(lines):
        name, _, delimiter = lines[i].partition("<<")
        end = lines.index(delimiter, i + 1)
        out[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return out


def _assert_steps(stderr: str, run_id: str, outcome: str, verb: str, url: str) -> None:
    """stderr tells, one plain line per step, what the action did, then sums it up."""
    assert "\x1b[" not in stderr  # a CI log gets plain lines, no progress bar or colour codes
    lines = stderr.splitlines()
    steps = [
        "reading 1 eval file: eval.yaml",
        "running eval.yaml",
        f"run {run_id} (arith): completed, 80 samples, pass rate ",
        f"compared run {run_id} with baseline ",
        "wrote the job summary and the step outputs",
        f"posting or updating the comment on pull request #{PR} of owner/name",
        f"{verb} comment {url}",
        "aieval github: 1 run compared in ",
    ]
    found = [next(i for i, line in enumerate(lines) if line.startswith(s)) for s in steps]
    assert found == sorted(found), stderr
    assert lines[found[3]].endswith(f": {outcome}")
    assert lines[-1].endswith(
        f"(1 {outcome}); decision {outcome}, the check "
        f"{'fails' if verb == 'created' else 'passes'}; comment {verb} {url}"
    ), stderr


@pytest.mark.slow
def test_the_first_run_creates_the_comment_and_the_second_updates_it(
    tmp_path: Path, github: GitHubServer, baseline: Baseline
) -> None:
    baseline(tmp_path)
    _write_eval(tmp_path, wrong_every=4)  # a quarter of the answers now wrong: blocked

    first = _action(tmp_path, github)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "decision block: the check fails" in first.stdout
    posts = [c for c in github.calls if c.method == "POST"]
    assert len(posts) == 1 and posts[0].path == f"/repos/{github.repo}/issues/{PR}/comments"
    pages = [
        c.query.get("page", "1") for c in github.calls if c.method == "GET" and c.path != "/user"
    ]
    assert pages == ["1", "2"]  # every page read before deciding to create
    assert all(c.authorization == f"Bearer {github.token}" for c in github.calls)
    (made,) = github.marked(PR, MARKER)
    outputs = _outputs(tmp_path)
    assert outputs["decision"] == "block" and outputs["passed"] == "false"
    assert outputs["comment-id"] == str(made["id"]) and outputs["comment-url"] == made["html_url"]
    body = made["body"]
    assert body.startswith(MARKER + "\n") and body.count("<!--") == 1  # the sample's is escaped
    assert "## ❌ aieval: blocked (the check fails)" in body and "@octocat" not in body
    assert "❌ aieval: **blocked** · arith" in body
    assert "`weighted_score_noninferior`" in body and "Top regressions (10 of 20)" in body
    assert (tmp_path / "summary.md").read_text() == body
    _assert_steps(first.stderr, outputs["runs"], "block", "created", made["html_url"])

    github.calls.clear()
    second = _action(tmp_path, github, "--on-block", "pass")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "decision block: the check passes" in second.stdout
    assert (github.calls[0].method, github.calls[0].path) == ("GET", "/user")
    assert [c.method for c in github.calls] == ["GET", "GET", "GET", "PATCH"]
    assert github.calls[-1].path == f"/repos/{github.repo}/issues/comments/{made['id']}"
    assert len(github.marked(PR, MARKER)) == 1  # updated, never a second comment
    assert len(github.comments[PR]) == 151
    assert _outputs(tmp_path)["comment-id"] == str(made["id"])
    _assert_steps(second.stderr, _outputs(tmp_path)["runs"], "block", "updated", made["html_url"])
    runs = Store(tmp_path / "runs.db").list_runs(name="arith")
    assert [r.config["git_branch"] for r in runs] == ["feature", "feature", "main"]


@pytest.mark.slow
def test_a_strangers_comment_with_the_marker_is_never_edited(
    tmp_path: Path, github: GitHubServer, baseline: Baseline
) -> None:
    """Anyone may start a comment with the marker: updating it would make them the verdict's
    author. The action writes its own (as github-actions[bot], GITHUB_TOKEN's author) and
    updates only that one on the next run."""
    forged = MARKER + "\n## ✅ aieval: promote (the check passes)"
    github.seed(PR, [forged], login="mallory")
    baseline(tmp_path)
    _write_eval(tmp_path, wrong_every=4)

    assert _action(tmp_path, github).returncode == 1
    stranger, mine = github.marked(PR, MARKER)
    assert stranger["user"]["login"] == "mallory" and stranger["body"] == forged
    assert mine["user"]["login"] == "github-actions[bot]" and "blocked" in mine["body"]
    assert not [c for c in github.calls if c.method == "PATCH"]

    github.calls.clear()
    assert _action(tmp_path, github).returncode == 1
    assert len(github.marked(PR, MARKER)) == 2 and stranger["body"] == forged
    (patch,) = [c for c in github.calls if c.method == "PATCH"]
    assert patch.path == f"/repos/{github.repo}/issues/comments/{mine['id']}"


def test_a_personal_token_updates_only_its_users_comment(
    tmp_path: Path, github: GitHubServer, baseline: Baseline
) -> None:
    """With a token that may read GET /user, that user is the author: a comment with the marker
    by github-actions[bot] (another workflow's token) is not this one's."""
    github.user_login = "ci-user"
    github.seed(PR, [MARKER + "\nold"], login="github-actions[bot]")
    baseline(tmp_path)
    assert _action(tmp_path, github).returncode in (0, 1)
    bot, mine = github.marked(PR, MARKER)
    assert bot["body"] == MARKER + "\nold" and mine["user"]["login"] == "ci-user"


def test_a_configured_bot_login_is_the_author_of_an_app_token(
    tmp_path: Path, github: GitHubServer, baseline: Baseline
) -> None:
    github.bot_login = "evals-app[bot]"
    github.seed(PR, [MARKER + "\nfrom the app"], login="evals-app[bot]")
    github.seed(PR, [MARKER + "\nfrom actions"], login="github-actions[bot]")
    baseline(tmp_path)
    done = _action(tmp_path, github, "--bot-login", "evals-app[bot]")
    assert done.returncode in (0, 1), done.stderr
    app, actions = github.marked(PR, MARKER)
    assert "aieval: promote" in app["body"] and actions["body"] == MARKER + "\nfrom actions"
    refused = _action(tmp_path, github, "--bot-login", "x --><script>")
    assert refused.returncode == 2 and "bot login" in refused.stderr


@pytest.mark.parametrize(
    ("wrong_every", "rows", "args", "code", "decision"),
    [
        pytest.param(None, 80, (), 0, "promote", id="promote-passes"),
        pytest.param(4, 80, (), 1, "block", id="block-fails"),
        pytest.param(4, 80, ("--on-block", "pass"), 0, "block", id="block-mapped-to-pass"),
        pytest.param(None, 20, (), 1, "inconclusive", id="inconclusive-fails"),
        pytest.param(
            None, 20, ("--on-inconclusive", "pass"), 0, "inconclusive", id="inconclusive-to-pass"
        ),
        pytest.param(None, 80, ("--on-promote", "fail"), 1, "promote", id="promote-to-fail"),
    ],
)
def test_the_exit_status_follows_the_decision_and_the_mapping(
    tmp_path: Path,
    github: GitHubServer,
    baseline: Baseline,
    in_process: Cli,
    monkeypatch: pytest.MonkeyPatch,
    wrong_every: int | None,
    rows: int,
    args: tuple[str, ...],
    code: int,
    decision: str,
) -> None:
    baseline(tmp_path, rows)
    _write_eval(tmp_path, wrong_every=wrong_every, n=rows)
    done = _action_here(in_process, monkeypatch, tmp_path, github, "--no-comment", *args)
    assert done.returncode == code, done.stdout + done.stderr
    outputs = _outputs(tmp_path)
    assert outputs["decision"] == decision
    assert outputs["passed"] == ("true" if code == 0 else "false")
    assert [c for c in github.calls if c.method != "GET"] == []  # --no-comment


def test_a_refused_comment_fails_loudly_after_the_summary(
    tmp_path: Path, github: GitHubServer, baseline: Baseline
) -> None:
    baseline(tmp_path)
    github.refuse_writes = 403
    done = _action(tmp_path, github)
    assert done.returncode == 5  # its own code: not a missed minimum (4)
    assert "403" in done.stderr and "pull-requests: write" in done.stderr
    assert (tmp_path / "summary.md").read_text().startswith(MARKER)
    assert _outputs(tmp_path)["decision"] in ("promote", "inconclusive")


def test_no_baseline_on_the_branch_is_inconclusive_and_says_so(
    tmp_path: Path, github: GitHubServer
) -> None:
    _write_eval(tmp_path, wrong_every=None)
    done = _action(tmp_path, github, "--baseline-branch", "release")
    assert done.returncode == 1
    (made,) = github.marked(PR, MARKER)
    assert "No baseline: no completed run named arith on branch release" in made["body"]
    assert _outputs(tmp_path)["baselines"] == "-"


def test_a_baseline_in_another_store_is_compared(
    tmp_path: Path, github: GitHubServer, baseline: Baseline
) -> None:
    baseline(tmp_path)
    (tmp_path / "runs.db").rename(tmp_path / "artifact.db")
    _write_eval(tmp_path, wrong_every=None)
    done = _action(tmp_path, github, "--baseline-db", "artifact.db", "--no-comment")
    assert done.returncode == 0, done.stdout + done.stderr
    baseline = Store(tmp_path / "artifact.db").list_runs(name="arith")[0]
    assert _outputs(tmp_path)["baselines"] == baseline.id


def test_a_baseline_artifact_with_an_endless_view_is_refused_at_once(
    tmp_path: Path, github: GitHubServer, baseline: Baseline
) -> None:
    """A downloaded store whose ``scores`` is a view over an endless recursive query: refused
    on opening, naming the file, before any query runs (it used to hang the job)."""
    baseline(tmp_path)
    (tmp_path / "runs.db").rename(tmp_path / "artifact.db")
    with sqlite3.connect(tmp_path / "artifact.db") as raw:
        raw.execute("DROP TABLE scores")
        raw.execute(
            "CREATE VIEW scores (run_id, sample_id, scorer, value, raw, reason, error, metadata,"
            " unreadable) AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)"
            " SELECT s.run_id, s.sample_id, 'token_f1', 1.0, NULL, NULL, NULL, NULL, NULL"
            " FROM n, samples AS s"
        )
    raw.close()
    _write_eval(tmp_path, wrong_every=None)
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "github", "eval.yaml", "--db", "runs.db",
         "--baseline-db", "artifact.db", "--no-comment"],
        cwd=tmp_path, env=_env(tmp_path, github), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr  # a bad input, not a blocked check
    assert "artifact.db is not a store aieval wrote: it holds view 'scores'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_baseline_artifact_with_a_value_aieval_never_writes_is_refused_naming_it(
    tmp_path: Path, github: GitHubServer, baseline: Baseline
) -> None:
    """A downloaded store whose run's ``metrics`` are bytes that are not text: an error naming
    the file, the run and the column, without a traceback (it used to end in one)."""
    baseline(tmp_path)
    (tmp_path / "runs.db").rename(tmp_path / "artifact.db")
    with sqlite3.connect(tmp_path / "artifact.db") as raw:
        raw.execute("UPDATE runs SET metrics = x'00ff'")
    raw.close()
    _write_eval(tmp_path, wrong_every=None)
    done = _action(tmp_path, github, "--baseline-db", "artifact.db", "--no-comment")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "artifact.db is not a store aieval wrote: in table 'runs', row id " in done.stderr
    assert "column 'metrics' holds a value of type blob" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_whole_comment_stays_within_githubs_limit_with_several_models(
    tmp_path: Path, github: GitHubServer
) -> None:
    """One eval file, three models, hundreds of regressions each with a long id: every run
    alone would fill a comment (it used to come to twice the limit with two models). The
    budget is the whole comment's; each run keeps its decision and a cut, counted list."""
    models = ["model-a", "model-b", "model-c"]

    def write(wrong: bool) -> None:
        rows = [
            {
                "id": f"case-{i:04d}-" + "x" * 250,
                "input": f"what is {i} + {i}?",
                "expected": f"the answer is {2 * i}",
                "predictions": {
                    m: ("no idea" if wrong else f"the answer is {2 * i}") for m in models
                },
            }
            for i in range(200)
        ]
        (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (tmp_path / "eval.yaml").write_text(
            f"name: arith\ndataset: data.jsonl\nmodels: {json.dumps(models)}\n"
            "scorers: [exact_match]\n"
        )

    write(wrong=False)
    env = _env(
        tmp_path, github, GITHUB_HEAD_REF="", GITHUB_REF_TYPE="branch", GITHUB_REF_NAME="main"
    )
    base = subprocess.run(
        [sys.executable, "-m", "aieval", "run", "eval.yaml", "--db", "runs.db", "-q"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert base.returncode == 0, base.stderr
    write(wrong=True)
    done = _action(tmp_path, github)
    assert done.returncode == 1, done.stdout + done.stderr
    (made,) = github.marked(PR, MARKER)
    body = made["body"]
    assert len(body) <= 65_536
    assert len(body) > 40_000  # the room is used, not left empty
    for model in models:
        assert f"| arith | {model} | ❌ blocked |" in body
    assert body.count("❌ aieval: **blocked** · arith") == 3
    assert body.count("rows left out to keep the comment under GitHub's size limit") >= 3
    assert (tmp_path / "summary.md").read_text() == body


@pytest.mark.slow
def test_the_action_step_runs_as_github_runs_it(
    tmp_path: Path, github: GitHubServer, baseline: Baseline
) -> None:
    """The command step of action.yml, its inputs filled in, run by bash: the same comment."""
    action = yaml.safe_load((Path(__file__).resolve().parents[2] / "action.yml").read_text())
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == "aieval"]
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update({"eval-files": "eval.yaml", "store": "runs.db", "github-token": github.token})
    baseline(tmp_path)
    env = _env(tmp_path, github)
    for name, value in step["env"].items():
        found = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", value)
        assert found, value
        env[name] = inputs[found.group(1)]
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        ["bash", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    (made,) = github.marked(PR, MARKER)
    assert _outputs(tmp_path)["comment-id"] == str(made["id"])


def test_the_store_may_be_a_team_database(
    tmp_path: Path,
    github: GitHubServer,
    store_location: str,
    in_process: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same job on an SQLite file and on a PostgreSQL database (``--db`` as given)."""
    # the base branch's run in this process (as _run_baseline's, with its environment); the
    # action in a process of its own, as the job runs it
    _write_eval(tmp_path, wrong_every=None)
    main_branch = {"GITHUB_HEAD_REF": "", "GITHUB_REF_TYPE": "branch", "GITHUB_REF_NAME": "main"}
    for name in list(os.environ):
        if name.startswith(("GITHUB_", "AIEVAL_")):
            monkeypatch.delenv(name)
    env = _env(tmp_path, github, **main_branch)
    ran = in_process(
        "run",
        "eval.yaml",
        "--db",
        store_location,
        "-q",
        cwd=tmp_path,
        env={k: v for k, v in env.items() if k.startswith(("GITHUB_", "AIEVAL_"))},
    )
    assert ran.returncode == 0, ran.stderr
    _write_eval(tmp_path, wrong_every=4)
    done = _action(tmp_path, github, db=store_location)
    assert done.returncode == 1, done.stdout + done.stderr
    baseline = next(
        r for r in Store(store_location).list_runs(name="arith") if r.config["git_branch"] == "main"
    )
    assert _outputs(tmp_path)["baselines"] == baseline.id
    (made,) = github.marked(PR, MARKER)
    assert "❌ aieval: **blocked** · arith" in made["body"]
