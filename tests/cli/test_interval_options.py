"""``--interval-method`` and ``--bootstrap-max-n`` on ``aieval report`` and ``aieval compare``,
the policy file's fields, and the progress bar of a forced bootstrap."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console
from tests.support.cli import Cli
from tests.support.reports import store_run

from aieval._records import SampleRecord, ScoreRecord
from aieval.cli import _report
from aieval.store import Store

N = 40


def _samples(seed: int) -> list[SampleRecord]:
    f1 = np.round(np.random.default_rng(seed).beta(4, 2, size=N), 3)
    return [
        SampleRecord(
            id=f"e{i}", index=i, input=f"q{i}", prediction="p", expected="gold",
            passed=bool(f1[i] > 0.5), scores={"f1": ScoreRecord(float(f1[i]))},
        )
        for i in range(N)
    ]  # fmt: skip


@pytest.fixture
def runs(tmp_path: Path) -> tuple[str, str, str]:
    """The store's path, a baseline run and a candidate run of N examples."""
    path = tmp_path / "runs.db"
    store = Store(path)
    base, cand = store_run(store, _samples(1)), store_run(store, _samples(2))
    store.close()
    return str(path), base, cand


def _json(text: str) -> Any:
    return json.loads(text)


def test_report_switches_at_the_given_size(in_process: Cli, runs: tuple[str, str, str]) -> None:
    db, base, _ = runs
    at = in_process("report", base, "--db", db, "-f", "json", "--bootstrap-max-n", str(N))
    below = in_process("report", base, "--db", db, "-f", "json", "--bootstrap-max-n", str(N + 1))
    assert at.returncode == below.returncode == 0, at.stderr + below.stderr
    assert _json(at.stdout)["weighted_score"]["method"] == "Student t"
    assert _json(below.stdout)["weighted_score"]["method"] == "percentile bootstrap"
    forced = in_process(
        "report", base, "--db", db, "-f", "json",
        "--interval-method", "bootstrap", "--bootstrap-max-n", "1",
    )  # fmt: skip
    assert _json(forced.stdout) == _json(below.stdout)


def _rule(stdout: str) -> dict[str, Any]:
    rules = _json(stdout)["decision"]["rules"]
    details: dict[str, Any] = next(
        r["details"] for r in rules if r["rule"] == "weighted_score_noninferior"
    )
    return details


def test_compare_takes_the_options_and_the_policy_fields(
    in_process: Cli, runs: tuple[str, str, str], tmp_path: Path
) -> None:
    db, base, cand = runs
    flag = in_process("compare", base, cand, "--db", db, "-f", "json", "--bootstrap-max-n", "40")
    assert _rule(flag.stdout)["method"] == "paired t-test"
    assert _json(flag.stdout)["decision"]["policy"]["bootstrap_max_n"] == N
    policy = tmp_path / "policy.yaml"
    policy.write_text("bootstrap_max_n: 40\n", encoding="utf-8")
    from_file = in_process("compare", base, cand, "--db", db, "-f", "json", "--policy", str(policy))
    assert _rule(from_file.stdout)["method"] == "paired t-test"
    policy.write_text("interval_method: bootstrap\nbootstrap_max_n: 1\n", encoding="utf-8")
    forced = in_process("compare", base, cand, "--db", db, "-f", "json", "--policy", str(policy))
    assert _rule(forced.stdout)["method"] == "studentized bootstrap"
    # the command line overrides the file
    back = in_process(
        "compare", base, cand, "--db", db, "-f", "json", "--policy", str(policy),
        "--interval-method", "auto",
    )  # fmt: skip
    assert _rule(back.stdout)["method"] == "paired t-test"


@pytest.mark.parametrize("command", ["report", "compare"])
def test_a_bad_size_is_a_usage_error_naming_the_option(
    in_process: Cli, runs: tuple[str, str, str], command: str
) -> None:
    db, base, cand = runs
    refs = [base] if command == "report" else [base, cand]
    done = in_process(command, *refs, "--db", db, "--bootstrap-max-n", "0")
    assert done.returncode == 2
    assert "bootstrap_max_n" in done.stderr and "Traceback" not in done.stderr
    method = in_process(command, *refs, "--db", db, "--interval-method", "normal")
    assert method.returncode == 2 and "--interval-method" in method.stderr


def test_a_forced_bootstrap_shows_a_progress_bar_on_a_terminal(
    in_process: Cli, runs: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, base, _ = runs
    screen = io.StringIO()
    monkeypatch.setattr(_report, "err", Console(file=screen, force_terminal=True, width=100))
    done = in_process("report", base, "--db", db, "-f", "json", "--interval-method", "bootstrap")
    assert done.returncode == 0
    assert "bootstrap resamples" in screen.getvalue() and "100%" in screen.getvalue()
    quiet = io.StringIO()
    monkeypatch.setattr(_report, "err", Console(file=quiet, force_terminal=True, width=100))
    in_process("report", base, "--db", db, "-f", "json")  # auto: no bar
    assert quiet.getvalue() == ""
