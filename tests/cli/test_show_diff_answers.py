"""``aieval show`` and ``aieval diff`` print what a reviewer needs to judge a sample: the input,
the expected answer, the prediction and each scorer's reason; escaped, cut to a preview unless
``--full``.

The runs are made by ``aieval run`` in a fresh interpreter (a JSON-schema scorer from the
project's own file), so the store is the real SQLite file the command writes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.cli import Done, run_main

from aieval import Store
from aieval.cli._samples import PREVIEW_LINES

ANSI = "ok \x1b[31mred\x1b[0m \x1b]0;title\x07 \u202eevil"
LONG = "\n".join(f"line {i:02d} of a long answer" for i in range(40))
ROWS = [
    {"id": "brazil", "prompt": "Capital of Brazil? Answer as a JSON array.",
     "expected": ["Brasília", "Brasilia"], "predictions": {"v1": "Brasília", "v2": '"Brazil"'}},
    {"id": "colour", "prompt": "Say ok.", "expected": "ok",
     "predictions": {"v1": "ok", "v2": ANSI}},
    {"id": "essay", "prompt": "Answer briefly.", "expected": "short",
     "predictions": {"v1": "short", "v2": LONG}},
]  # fmt: skip
CHECKS = """
import json

import jsonschema

from aieval import Score, scorer


@scorer
def is_json(prediction: str, _expected: object) -> Score:
    try:
        jsonschema.validate(json.loads(prediction), {"type": "array"})
    except json.JSONDecodeError as exc:
        return Score(0.0, reason=f"not JSON: {exc}")
    except jsonschema.ValidationError as exc:
        return Score(0.0, reason=f"schema: {exc.message}")
    return Score(1.0, reason="a JSON array")
"""
RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def aieval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AIEVAL_DB": str(cwd / "runs.db"), "COLUMNS": "160"}
    return subprocess.run(
        [sys.executable, "-m", "aieval", *args],
        cwd=cwd, capture_output=True, text=True, env=env, timeout=180, check=False,
    )  # fmt: skip


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Done]:
    """``aieval ARGS`` in this process, as :func:`aieval` runs it in a process of its own."""

    def invoke(*args: str, cwd: Path) -> Done:
        env = {"AIEVAL_DB": str(cwd / "runs.db"), "COLUMNS": "160"}
        return run_main(capsys, monkeypatch, *args, cwd=cwd, env=env)

    return invoke


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    root = tmp_path_factory.mktemp("answers")
    (root / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (root / "checks.py").write_text(CHECKS)
    (root / "eval.yaml").write_text(
        "name: capitals\ndataset: rows.jsonl\nmodels: [v1, v2]\nimports: [checks.py]\n"
        "scorers: [exact_match, is_json]\n"
    )
    done = aieval("run", "eval.yaml", "-q", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    runs = {r.model: r.id for r in Store(root / "runs.db").list_runs(name="capitals")}
    return root, runs["v1"], runs["v2"]


def _no_raw_controls(text: str) -> None:
    assert not RAW_CONTROLS.findall(text), sorted(set(RAW_CONTROLS.findall(text)))


def _preview_left() -> int:
    """Characters of LONG left out of the preview: it stops before the 6th line break."""
    breaks = [i for i, c in enumerate(LONG) if c == "\n"]
    return len(LONG) - breaks[PREVIEW_LINES - 1]


def test_show_prints_answers_expected_and_reasons(
    project: tuple[Path, str, str], cli: Callable[..., Done]
) -> None:
    root, _, v2 = project
    done = cli("show", v2, cwd=root)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    _no_raw_controls(text)
    assert "samples (3 of 3)" in text
    assert "Capital of Brazil? Answer as a JSON array." in text  # the input
    assert '["Brasília", "Brasilia"]' in text and '"Brazil"' in text  # expected, prediction
    assert "schema: 'Brazil' is not of type 'array'" in text  # is_json's reason
    assert "best of 2 accepted answers: 'Brasília'" in text  # exact_match's reason
    assert "not JSON: Expecting value: line 1 column 1 (char 0)" in text
    # model output is escaped, never run by the terminal
    assert "ok \\x1b[31mred\\x1b[0m \\x1b]0;title\\x07 \\u202eevil" in text
    # the long answer: a preview of its first lines, then how much is left and how to see it
    assert "line 05 of a long answer" in text and "line 06 of a long answer" not in text
    assert f"… [{_preview_left():,} more characters; --full shows all]" in text


def test_show_full_prints_everything(
    project: tuple[Path, str, str], cli: Callable[..., Done]
) -> None:
    root, _, v2 = project
    done = cli("show", v2, "--full", cwd=root)
    assert done.returncode == 0, done.stderr
    _no_raw_controls(done.stdout)
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    at = lines.index("prediction line 00 of a long answer")
    assert lines[at + 1 : at + 40] == [f"line {i:02d} of a long answer" for i in range(1, 40)]
    assert "--full shows all" not in done.stdout


def test_diff_prints_both_answers_and_reasons(
    project: tuple[Path, str, str], cli: Callable[..., Done]
) -> None:
    root, v1, v2 = project
    done = cli("diff", v1, v2, cwd=root)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    _no_raw_controls(text)
    assert "regressions: answers and reasons (3)" in text
    block = text[text.index("example brazil") :]
    block = " ".join(block.split("\nexample ")[0].split())  # columns are padded with spaces
    for needed in (
        "input Capital of Brazil? Answer as a JSON array.",
        'expected ["Brasília", "Brasilia"]',
        "baseline fail prediction Brasília",  # the baseline's answer
        'candidate fail prediction "Brazil"',  # the candidate's
        "schema: 'Brazil' is not of type 'array'",
        "not JSON: Expecting value: line 1 column 1 (char 0)",
    ):
        assert needed in block, (needed, block)
    assert block.index("baseline") < block.index("not JSON") < block.index("candidate")
    assert block.index("candidate") < block.index("schema: 'Brazil'")
    assert "ok \\x1b[31mred\\x1b[0m \\x1b]0;title\\x07 \\u202eevil" in text
    assert f"… [{_preview_left():,} more characters; --full shows all]" in text
    assert "line 39 of a long answer" not in text

    full = aieval("diff", v1, v2, "--full", cwd=root)
    assert full.returncode == 0, full.stderr
    _no_raw_controls(full.stdout)
    assert "--full shows all" not in full.stdout
    assert all(f"line {i:02d} of a long answer" in full.stdout for i in range(40))


def test_show_full_prints_a_long_scorer_error_whole_in_the_top_errors(
    tmp_path: Path, cli: Callable[..., Done]
) -> None:
    from aieval import run, scorer
    from aieval.errors import ScorerError

    said = "the check could not run: " + " ".join(f"part{i:03d}" for i in range(80)) + " END"

    @scorer
    def fails(prediction: str) -> float:
        raise ScorerError(said + ("" if prediction == "x" else f" for {prediction}"))

    def top_errors(*rows: str, full: bool) -> str:
        dataset = [{"id": p, "input": "q", "prediction": p} for p in rows]
        result = run(name="long", dataset=dataset, scorers=[fails], store=tmp_path / "runs.db")
        done = cli("show", result.id, *(["--full"] if full else []), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return " ".join(done.stdout.split("top errors:")[1].split("samples (")[0].split())

    assert "END" not in top_errors("x", full=False)  # the summary's line is cut short
    assert top_errors("x", full=True) == f"1 × fails: {said}"
    # two messages the summary counted as one: their count is never put on one of them
    both = top_errors("y", "z", full=True)
    assert both.startswith("2 × fails: the check") and "END" not in both
    assert both.endswith("… (2 messages begin so: see the samples)")
