"""The workflow docs/ci.md gives works from an empty repository: its lookup of main's store
(run by bash as GitHub runs it, against a stand-in ``gh``) takes only push runs of main and the
newest one that kept a store, finds none without failing on a first push, and the first push
then passes and stores the baseline a pull request compares with."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.ci.test_github_action import MARKER, PR, _env, _outputs, _write_eval
from tests.support.github_server import GitHubServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "ci.md"
RUN_ID = "12"
# a stand-in for the GitHub CLI: `gh run list` prints the runs of $GH_STUB_RUNS the --jq filter
# keeps (it drops the id it compares with), `gh run download` succeeds for $GH_STUB_KEPT
GH = """\
import os, re, shutil, sys
from pathlib import Path
args = sys.argv[1:]
with open(os.environ["GH_STUB_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
if os.environ.get("GH_STUB_FAIL"):
    sys.exit("HTTP 403: Resource not accessible by integration")
if args[:2] == ["run", "list"]:
    dropped = re.findall(r"!= (\\d+)", args[args.index("--jq") + 1])
    print("\\n".join(i for i in os.environ["GH_STUB_RUNS"].split() if i not in dropped))
elif args[:2] == ["run", "download"]:
    if args[2] not in os.environ["GH_STUB_KEPT"].split():
        sys.exit("no valid artifacts found to download")
    folder = Path(args[args.index("--dir") + 1])
    folder.mkdir()
    shutil.copy(os.environ["GH_STUB_STORE"], folder / "aieval.db")
"""


def _workflow() -> dict[str, Any]:
    text = DOC.read_text(encoding="utf-8")
    found = re.search(r"```yaml\n(# \.github/workflows/evals\.yml\n.*?)```", text, re.S)
    assert found, "docs/ci.md has no complete workflow"
    data = yaml.safe_load(found.group(1))
    assert isinstance(data, dict)
    return data


def _steps() -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = _workflow()["jobs"]["evals"]["steps"]
    return steps


def _lookup(
    folder: Path, runs: str, kept: str, **extra: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """The documented lookup step, run by bash as GitHub runs a ``run:`` step."""
    (step,) = [s for s in _steps() if s.get("id") == "baseline"]
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(f"#!{sys.executable}\n{GH}")
    gh.chmod(0o755)
    store = folder / "main.db"
    store.write_bytes(b"a store")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_RUN_ID": RUN_ID,
        "GITHUB_OUTPUT": str(folder / "output.txt"),
        "GH_STUB_LOG": str(folder / "gh.log"),
        "GH_STUB_RUNS": runs,
        "GH_STUB_KEPT": kept,
        "GH_STUB_STORE": str(store),
        **extra,
    }
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=folder, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    log = folder / "gh.log"
    return done, log.read_text().splitlines() if log.exists() else []


def test_the_lookup_takes_the_newest_push_run_of_main_that_kept_a_store(tmp_path: Path) -> None:
    done, calls = _lookup(tmp_path, runs=f"{RUN_ID} 11 10 9", kept=f"{RUN_ID} 10 9")
    assert done.returncode == 0, done.stderr
    listed = calls[0].split()
    assert listed[:2] == ["run", "list"]
    assert listed[listed.index("--branch") + 1] == "main"
    assert listed[listed.index("--event") + 1] == "push"  # never a fork's branch named main
    # this run itself is left out, 11 kept no store, 10 is the baseline
    assert [c.split()[2] for c in calls[1:]] == ["11", "10"]
    assert (tmp_path / "output.txt").read_text() == "store=baseline/aieval.db\n"
    assert (tmp_path / "baseline" / "aieval.db").read_bytes() == b"a store"


def test_a_first_push_finds_no_store_and_goes_on(tmp_path: Path) -> None:
    done, calls = _lookup(tmp_path, runs=RUN_ID, kept="")
    assert done.returncode == 0, done.stderr
    assert len(calls) == 1  # only the list: nothing to download
    assert not (tmp_path / "output.txt").exists() and not (tmp_path / "baseline").exists()


def test_a_lookup_gh_refuses_fails_the_step(tmp_path: Path) -> None:
    done, _ = _lookup(tmp_path, runs="11", kept="11", GH_STUB_FAIL="1")
    assert done.returncode != 0 and "403" in done.stderr


def _on_inconclusive(event: str) -> str:
    """The action's ``on-inconclusive`` as GitHub evaluates the documented expression."""
    (step,) = [s for s in _steps() if s.get("id") == "aieval"]
    value = step["with"]["on-inconclusive"]
    found = re.fullmatch(
        r"\$\{\{ github\.event_name == '(\w+)' && '(\w+)' \|\| '(\w+)' \}\}", value
    )
    assert found, value
    return found.group(2) if event == found.group(1) else found.group(3)


@pytest.mark.slow
def test_an_empty_repository_bootstraps(tmp_path: Path) -> None:
    """The first push has no baseline: it passes and its store is the artifact; the pull
    request opened next compares with it."""
    keep = next(s for s in _steps() if s.get("name") == "Keep the store as the next baseline")
    assert "github.event_name == 'push'" in keep["if"] and keep["with"]["path"] == "aieval.db"
    _write_eval(tmp_path, wrong_every=None)
    with GitHubServer() as github:
        push_event = tmp_path / "push.json"
        push_event.write_text(json.dumps({"repository": {"default_branch": "main"}}))
        env = _env(tmp_path, github, GITHUB_EVENT_PATH=str(push_event), GITHUB_HEAD_REF="",
                   GITHUB_REF_TYPE="branch", GITHUB_REF_NAME="main")  # fmt: skip
        first = subprocess.run(
            [sys.executable, "-m", "aieval", "github", "eval.yaml", "--db", "aieval.db",
             "--on-inconclusive", _on_inconclusive("push")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert first.returncode == 0, first.stdout + first.stderr
        assert _outputs(tmp_path)["decision"] == "inconclusive"
        assert not github.calls  # a push comments nowhere
        (tmp_path / "baseline").mkdir()
        (tmp_path / "aieval.db").rename(tmp_path / "baseline" / "aieval.db")

        pull = subprocess.run(
            [sys.executable, "-m", "aieval", "github", "eval.yaml", "--db", "aieval.db",
             "--baseline-db", "baseline/aieval.db",
             "--on-inconclusive", _on_inconclusive("pull_request")],
            cwd=tmp_path, env=_env(tmp_path, github), capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        assert pull.returncode == 0, pull.stdout + pull.stderr
        assert _outputs(tmp_path)["decision"] == "promote"
        (made,) = github.marked(PR, MARKER)
        assert "✅ aieval: promote" in made["body"]
