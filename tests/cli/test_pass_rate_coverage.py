"""A pass rate never hides a scorer that covered little: the run line, `aieval runs`, `aieval
show` and every report format name each scorer that scored nothing (and each that scored under
half its samples, the rest n/a) right beside the pass rate."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.cli import Cli

from aieval import Store
from aieval.core import low_coverage

AIEVAL = [sys.executable, "-m", "aieval"]
NOTHING = "cost scored nothing: n/a on all 15 samples"
LITTLE = "latency scored 3 of 15 samples (20%; n/a on 12)"
NOTE = f"({NOTHING}; {LITTLE})"


#: the console of the commands run in-process: what they print is tested, not their process
WIDE = {"COLUMNS": "400"}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*AIEVAL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "400"},
    )


@pytest.fixture(scope="module")
def stored_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """15 recorded answers, 12 right: no cost is known for any, a latency for 3 of them."""
    here = tmp_path_factory.mktemp("coverage")
    with (here / "rows.jsonl").open("w") as handle:
        for i in range(15):
            row = {"id": f"r{i}", "prompt": "p", "expected": "a", "prediction": "ab"[i >= 12]}
            if i < 3:
                row["recorded_latency_s"] = 0.5
            handle.write(json.dumps(row) + "\n")
    (here / "eval.yaml").write_text(
        "name: cov\ndataset: rows.jsonl\n"
        "scorers: [exact_match, {cost: {max_usd: 0.01}}, {latency: {max_s: 2}}]\n"
    )
    first = cli("run", "eval.yaml", "--db", "r.db", "-q", cwd=here)
    (here / "eval.yaml").write_text(
        "name: cov\ndataset: rows.jsonl\nscorers: [exact_match, {cost: {max_usd: 0.01}}]\n"
    )
    assert cli("run", "eval.yaml", "--db", "r.db", "-q", cwd=here).returncode == 3
    return here, first


def test_the_run_line_names_them_beside_the_pass_rate(
    stored_run: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    _, done = stored_run
    assert done.returncode == 3, done.stdout + done.stderr  # a scorer that scored no sample
    (line,) = [row for row in done.stdout.splitlines() if row.startswith("run ")]
    assert f"15 samples · pass rate 80.0% {NOTE} · " in line


def test_runs_and_show_name_them(
    stored_run: tuple[Path, subprocess.CompletedProcess[str]], in_process: Cli
) -> None:
    here, _ = stored_run
    listed = in_process("runs", "--db", "r.db", cwd=here, env=WIDE)
    assert listed.returncode == 0, listed.stderr
    assert "80.0% (cost scored nothing; latency scored 20%)" in listed.stdout
    first = re.search(r"run (\S+) · ", stored_run[1].stdout)
    assert first, stored_run[1].stdout
    shown = in_process("show", first.group(1), "--db", "r.db", "--samples", "0", cwd=here, env=WIDE)
    assert shown.returncode == 0, shown.stderr
    assert f"pass rate 80.0% of 15 samples {NOTE}" in shown.stdout


@pytest.mark.slow
def test_every_report_format_names_them(
    stored_run: tuple[Path, subprocess.CompletedProcess[str]],
    in_process: Cli,
) -> None:
    here, done = stored_run
    first = re.search(r"run (\S+) · ", done.stdout)
    assert first, done.stdout

    def report(form: str) -> str:
        done = in_process(
            "report", first.group(1), "--db", "r.db", "--format", form, cwd=here, env=WIDE
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert re.search(
        rf"pass rate 80\.0% \S+ \S+ \(Wilson score, 12/15\) {re.escape(NOTE)}", report("text")
    )
    assert f"pass rate **80.0%** [54.8%, 93.0%] (Wilson score) {NOTE}" in report("markdown")
    assert f"<span>pass rate [54.8%, 93.0%] (Wilson score) {NOTE}</span>" in report("html")
    low = json.loads(report("json"))["low_coverage"]
    assert [c["text"] for c in low] == [NOTHING, LITTLE]
    assert low[0] == {
        "name": "cost",
        "scored": 0,
        "samples": 15,
        "not_applicable": 15,
        "errors": 0,
        "text": NOTHING,
    }


def test_the_github_comment_names_them_for_each_side(
    stored_run: tuple[Path, subprocess.CompletedProcess[str]],
    in_process: Cli,
) -> None:
    here, done = stored_run
    first = re.search(r"run (\S+) · ", done.stdout)
    assert first, done.stdout
    latest = Store(here / "r.db").list_runs(name="cov")[0].id
    compared = in_process(
        "compare", first.group(1), latest, "--db", "r.db", "-f", "github", cwd=here, env=WIDE
    )
    assert compared.returncode in (0, 1), compared.stderr  # 1: not promoted
    assert f"> ⚠️ **The candidate's pass rate leaves out:** {NOTHING}\n" in compared.stdout
    assert (
        f"> ⚠️ **The baseline's pass rate leaves out:** {NOTHING}; latency scored 3 of 15"
        " samples (20%; n/a on 12)\n"
    ) in compared.stdout


@pytest.mark.parametrize(
    ("stats", "shown"),
    [
        pytest.param({"count": 8, "not_applicable": 7}, [], id="scored-over-half"),
        pytest.param({"count": 2, "errors": 8}, [], id="mostly-errors-is-the-error-budget's"),
        pytest.param(
            {"count": 0, "errors": 4},
            ["c scored nothing: failed on all 4 samples"],
            id="failed-on-all",
        ),
        pytest.param(
            {"count": 0, "not_applicable": 3, "errors": 1},
            ["c scored nothing: n/a on 3 and failed on 1 of 4"],
            id="mixed",
        ),
        pytest.param(
            {"n": 1, "not_applicable": 3},
            ["c scored 1 of 4 samples (25%; n/a on 3)"],
            id="report-counts",
        ),
        pytest.param({"count": 0}, [], id="no-samples"),
    ],
)
def test_which_scorers_are_named(stats: dict[str, int], shown: list[str]) -> None:
    assert [str(c) for c in low_coverage({"c": stats})] == shown
