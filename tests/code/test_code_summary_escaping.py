"""Task ids and failure details come from problem files: every summary format escapes them."""

import json
import re
from pathlib import Path

import pytest
from tests.support.cli import run_main

from aieval.code import CodeEvalSummary, evaluate_code

HOSTILE = {
    "task_id": "T\x1b[2J\x1b]0;PWN\x07<script>alert(1)</script>",
    "prompt": "",
    "test": "assert 1 == 2, '\x1b[31m<img src=x onerror=alert(1)>'",
    "canonical_solution": "print(1)",
}
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


@pytest.fixture(scope="module")
def summary() -> CodeEvalSummary:
    return evaluate_code([HOSTILE], canonical=True, allow_code_execution=True, store=False).summary


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "json"])
def test_no_format_carries_a_raw_control_character(summary: CodeEvalSummary, fmt: str) -> None:
    shown = summary.render(fmt)
    assert not RAW.findall(shown), fmt
    assert "1 executions" in shown or fmt == "json"


def test_text_shows_the_escapes(summary: CodeEvalSummary) -> None:
    shown = summary.render("text")
    assert "T\\x1b[2J\\x1b]0;PWN\\x07<script>" in shown
    assert "\\x1b[31m" in shown


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_markup_formats_open_no_tag(summary: CodeEvalSummary, fmt: str) -> None:
    shown = summary.render(fmt)
    assert "<script" not in shown and "<img" not in shown
    assert "&lt;script&gt;" in shown and "&lt;img src=x" in shown


def test_markdown_cells_cannot_break_the_table() -> None:
    row = {**HOSTILE, "task_id": "a|b\nc"}
    shown = evaluate_code(
        [row], canonical=True, allow_code_execution=True, store=False
    ).summary.render("markdown")
    [line] = [line for line in shown.splitlines() if line.startswith("| a")]
    assert line.count(" | ") == 8  # nine cells, the pipe in the id escaped


def test_json_keeps_the_data(summary: CodeEvalSummary) -> None:
    data = json.loads(summary.render("json"))
    assert data["problems"][0]["task_id"] == HOSTILE["task_id"]


def test_the_cli_prints_escaped_text_and_writes_escaped_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    problems = tmp_path / "evil.jsonl"
    problems.write_text(json.dumps(HOSTILE) + "\n")
    argv = ["code", str(problems), "--canonical", "--allow-code-execution", "--name", "evil",
            "--db", str(tmp_path / "r.db")]  # fmt: skip
    done = run_main(capsys, monkeypatch, *argv)
    assert done.returncode == 0, done.stderr
    assert not RAW.findall(done.stdout + done.stderr)
    assert "\\x1b[2J" in done.stdout
    out = tmp_path / "e.md"
    done = run_main(capsys, monkeypatch, *argv, "-f", "markdown", "-o", str(out))
    assert done.returncode == 0, done.stderr
    written = out.read_text()
    assert not RAW.findall(written) and "<script" not in written
