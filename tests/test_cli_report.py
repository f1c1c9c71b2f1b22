"""``aieval report / compare / diff / schema`` on a real store.

One exit code is checked in a real subprocess; the other behaviour runs ``aieval.cli.main``
in-process (same code path, without paying interpreter and SciPy start-up for every case).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.support.cli import Done, run_main
from tests.support.reports import HOSTILE_ID, record_runs

from aieval.report import comparison_schema, report_schema


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    db = tmp_path_factory.mktemp("cli-report") / "runs.db"
    return db, record_runs(db)


def process(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``aieval ARGS`` in a fresh interpreter, as a user or CI job runs it."""
    env = {**os.environ, "AIEVAL_DB": str(db), "COLUMNS": "160"}
    return subprocess.run(
        [sys.executable, "-m", "aieval", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """``aieval ARGS`` through ``aieval.cli.main`` in this process."""

    def invoke(
        db: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> Done:
        extra = {"AIEVAL_DB": str(db), **(env or {})}
        return run_main(capsys, monkeypatch, *args, cwd=cwd, env=extra)

    return invoke


def test_exit_codes_in_real_processes(
    store: tuple[Path, dict[str, str]], tmp_path: Path, cli: Any
) -> None:
    """A blocked comparison's exit code in a real process (the one ``aieval compare`` run as
    a process here); promote and an unknown run in-process, by the same code path."""
    db, ids = store
    promote = cli(db, "compare", ids["v1"], ids["v2"], env={"COLUMNS": "160"})
    assert promote.returncode == 0, promote.stderr
    assert promote.stdout.startswith("✔ promote")
    target = tmp_path / "cmp.html"
    block = process(db, "compare", "qa", ids["v1"], "-f", "html", "-o", str(target))
    assert block.returncode == 1, block.stderr
    assert "blocked" in block.stdout and f"wrote {target}" in block.stdout.replace("\n", "")
    assert 'class="verdict block"' in target.read_text(encoding="utf-8")
    unknown = cli(db, "compare", "no-such-run", "qa")
    assert unknown.returncode == 2
    assert "no-such-run" in unknown.stderr and "Traceback" not in unknown.stderr


def test_report_text_json_and_slices(store: tuple[Path, dict[str, str]], cli: Any) -> None:
    db, ids = store
    text = cli(db, "report", ids["v2"], "--slice", "topic")
    assert text.returncode == 0, text.stderr
    assert "pass rate" in text.stdout and "by topic" in text.stdout
    assert "billing" in text.stdout and "shipping" in text.stdout
    as_json = cli(db, "report", ids["graded"], "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    doc = json.loads(as_json.stdout)
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    assert doc["graded"] is True and doc["run"]["id"] == ids["graded"]


@pytest.mark.parametrize(
    ("fmt", "marker"),
    [
        pytest.param("html", "<!DOCTYPE html>", id="html"),
        pytest.param("md", "### aieval report", id="md"),
        pytest.param("markdown", "### aieval report", id="markdown"),
        pytest.param("json", '"kind": "report"', id="json"),
    ],
)
def test_report_output_file_is_written_and_named(
    store: tuple[Path, dict[str, str]], tmp_path: Path, fmt: str, marker: str, cli: Any
) -> None:
    db, ids = store
    target = tmp_path / f"report.{fmt}"
    done = cli(db, "report", ids["graded"], "-f", fmt, "-o", str(target))
    assert done.returncode == 0, done.stderr
    assert f"wrote {target}" in done.stdout.replace("\n", "")
    assert marker in target.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == [target.name], "no temporary file left"


def test_compare_promotes_with_exit_0(store: tuple[Path, dict[str, str]], cli: Any) -> None:
    db, ids = store
    done = cli(db, "compare", ids["v1"], ids["v2"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("✔ promote")
    assert "weighted_score_noninferior" in done.stdout


def test_compare_blocks_with_exit_1_and_prints_the_decision_with_output(
    store: tuple[Path, dict[str, str]], tmp_path: Path, cli: Any
) -> None:
    db, ids = store
    target = tmp_path / "cmp.html"
    done = cli(db, "compare", ids["v2"], ids["v1"], "--format", "html", "--output", str(target))
    assert done.returncode == 1, done.stderr
    assert "blocked" in done.stdout and f"wrote {target}" in done.stdout.replace("\n", "")
    page = target.read_text(encoding="utf-8")
    assert 'class="verdict block"' in page and HOSTILE_ID not in page


def test_compare_json_stays_clean_on_stdout(store: tuple[Path, dict[str, str]], cli: Any) -> None:
    db, ids = store
    done = cli(db, "compare", ids["v2"], ids["v1"], "-f", "json")
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    jsonschema.Draft202012Validator(comparison_schema()).validate(doc)
    assert doc["decision"]["summary"] in " ".join(done.stderr.split())


def test_compare_policy_options_change_the_decision(
    store: tuple[Path, dict[str, str]], tmp_path: Path, cli: Any
) -> None:
    db, ids = store
    policy = tmp_path / "policy.yaml"
    policy.write_text("noninferiority_margin: 100\nalpha: 0.5\n")
    # a margin of the whole scale makes any candidate non-inferior
    done = cli(db, "compare", ids["v2"], ids["v1"], "--policy", str(policy), "-f", "json")
    doc = json.loads(done.stdout)
    assert doc["decision"]["policy"]["noninferiority_margin"] == 100
    assert doc["decision"]["policy"]["alpha"] == 0.5
    overridden = cli(
        db,
        "compare",
        ids["v2"],
        ids["v1"],
        "--policy",
        str(policy),
        "--margin",
        "0.5",
        "-f",
        "json",
    )
    assert json.loads(overridden.stdout)["decision"]["policy"]["noninferiority_margin"] == 0.5
    assert overridden.returncode == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(("compare", "no-such-run", "qa"), "no-such-run", id="unknown-baseline"),
        pytest.param(("report", "no-such-run"), "no-such-run", id="unknown-report-run"),
        pytest.param(("compare", "qa", "qa", "--alpha", "2"), "alpha", id="bad-alpha"),
        pytest.param(
            ("compare", "qa", "qa", "--policy", "missing.yaml"), "missing.yaml", id="missing-policy"
        ),
        pytest.param(
            ("report", "qa", "-o", "no/such/dir/r.html", "-f", "html"),
            "does not exist",
            id="bad-output-folder",
        ),
    ],
)
def test_usage_errors_exit_2_with_one_clear_line(
    store: tuple[Path, dict[str, str]],
    tmp_path: Path,
    args: tuple[str, ...],
    message: str,
    cli: Any,
) -> None:
    db, _ = store
    done = cli(db, *args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr


def test_diff_lists_changes_and_all(store: tuple[Path, dict[str, str]], cli: Any) -> None:
    db, ids = store
    done = cli(db, "diff", ids["v1"], ids["v2"], "--limit", "3")
    assert done.returncode == 0, done.stderr
    assert "improvements (3 of" in done.stdout and "unchanged (" not in done.stdout
    every = cli(db, "diff", ids["v1"], ids["v2"], "--all", "--limit", "50")
    assert "unchanged (" in every.stdout
    assert HOSTILE_ID in every.stdout  # the terminal shows ids literally


@pytest.mark.parametrize(
    "name", [pytest.param("report", id="report"), pytest.param("comparison", id="comparison")]
)
def test_schema_command_prints_the_published_schema(tmp_path: Path, name: str, cli: Any) -> None:
    done = cli(tmp_path / "unused.db", "schema", name)
    assert done.returncode == 0, done.stderr
    expected = report_schema() if name == "report" else comparison_schema()
    assert json.loads(done.stdout) == expected
