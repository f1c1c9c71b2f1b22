"""Control characters from data are shown escaped by run, runs, show and the reports."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from tests.support.cli import Cli

from aieval._terminal import printable
from aieval.report import build_report, render_markdown, render_text

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
# printable() also escapes tab and newline, which would break one-line fields
ESCAPED = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
HOSTILE_NAME = "qa\u202eevil\x1b]0;pwned\x07"
HOSTILE_ID = "s\x1b[2J1"
ANSWER = "yes\x00\x1b[31mred\r\u2066x"


def aieval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``aieval ARGS`` in a process of its own: its output as written to a pipe."""
    return subprocess.run([sys.executable, "-m", "aieval", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def no_raw_controls(text: str) -> None:
    # the renderer's own colour codes are off when piped; newlines and tabs lay out tables
    leftovers = {c for c in RAW.findall(text) if c not in "\n\t"}
    assert not leftovers, leftovers


@pytest.fixture
def project(tmp_path: Path) -> Path:
    rows = [
        {"id": HOSTILE_ID, "prompt": "?", "expected": "yes", "prediction": ANSWER},
        {"id": "s2", "prompt": "?", "expected": "yes", "prediction": "yes"},
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "qa.yaml").write_text(yaml.safe_dump(
        {"name": HOSTILE_NAME, "dataset": "rows.jsonl", "scorers": ["exact_match"]},
        allow_unicode=False,
    ))  # fmt: skip
    return tmp_path


def test_run_runs_show_and_reports_escape_control_characters(
    project: Path, in_process: Cli
) -> None:
    done = aieval("run", "qa.yaml", "--db", "s.db", cwd=project)
    assert "Traceback" not in done.stderr, done.stderr
    no_raw_controls(done.stdout + done.stderr)
    assert "qa\\u202eevil\\x1b]0;pwned\\x07" in done.stdout
    for args in (
        ("runs",),
        ("show", HOSTILE_NAME),
        ("report", HOSTILE_NAME),
        ("report", HOSTILE_NAME, "--format", "md"),
        ("show", HOSTILE_NAME, "--json"),
    ):
        shown = in_process(*args, "--db", "s.db", cwd=project)
        assert shown.returncode == 0, (args, shown.stderr)
        no_raw_controls(shown.stdout + shown.stderr)
    table = in_process("show", HOSTILE_NAME, "--db", "s.db", cwd=project).stdout
    compact = re.sub(r"[\s│┃]", "", table)  # cells may fold across lines
    assert "s\\x1b[2J1" in compact and "yes\\x00\\x1b[31mred" in compact


def test_error_messages_escape_control_characters(tmp_path: Path, in_process: Cli) -> None:
    done = in_process("show", "no\x1b[2Jsuch", "--db", "s.db", cwd=tmp_path)
    assert done.returncode == 2
    no_raw_controls(done.stderr)


def test_multi_line_errors_keep_their_line_breaks_and_escape_the_data(
    tmp_path: Path, in_process: Cli
) -> None:
    bad = tmp_path / "bad\x1b[2J.yaml"  # a hostile file name is data inside the message
    bad.write_text(
        "rubric_id: r\ncriteria:\n  - name: correctness\n    scale: [1, 5]\n    weight: -1\n"
        "    wieght: 0.3\n    definition: d\n    evidence_required: [x]\n"
        "    anchors: {'1': a, '2': b, '3': c, '4': d, '5': e}\n"
    )
    done = in_process("rubric", "validate", bad.name, cwd=tmp_path)
    assert done.returncode == 1
    no_raw_controls(done.stdout)
    lines = done.stdout.splitlines()
    assert lines[0] == "invalid bad\\x1b[2J.yaml: 2 problems:"
    assert lines[1].startswith("  - criterion 'correctness' (criteria[0]), field 'weight'")
    assert any(line.startswith("  - criterion 'correctness' (criteria[0]), field 'wieght'")
               for line in lines[2:])  # fmt: skip
    assert "\\x0a" not in done.stdout
    # the same message as a command's error (a workflow naming the rubric) reads the same
    (tmp_path / "wf.yaml").write_text(
        f"name: wf\nsteps: [{{name: a}}]\nevaluation: {{rubric: {json.dumps(bad.name)}}}\n"
    )
    (tmp_path / "rows.jsonl").write_text('{"prompt": "?", "prediction": "x"}\n')
    (tmp_path / "qa.yaml").write_text(
        "name: qa\ndataset: rows.jsonl\nscorers: [exact_match]\nworkflow: wf.yaml\n"
    )
    failed = in_process("run", "qa.yaml", "--db", "s.db", cwd=tmp_path)
    assert failed.returncode == 2
    no_raw_controls(failed.stderr)
    assert "\\x0a" not in failed.stderr
    assert "bad\\x1b[2J.yaml: 2 problems:\n  - criterion 'correctness'" in failed.stderr
    # a stored run's error of several lines, as `show` prints it
    from aieval import Store

    store = Store(tmp_path / "s.db")
    run_id = store.create_run(name="broken", model=None, dataset_hash="h")
    store.finish_run(run_id, status="failed", error="2 problems:\n  - a \x1b[2J\n  - b")
    shown = in_process("show", "broken", "--db", "s.db", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    no_raw_controls(shown.stdout)
    assert "2 problems:\n  - a \\x1b[2J\n  - b\n" in shown.stdout


def test_report_renderers_escape_but_json_keeps_the_data(tmp_path: Path) -> None:
    from aieval import Store, run
    from aieval.scorers import exact_match

    store = Store(tmp_path / "s.db")
    rows = [{"id": HOSTILE_ID, "prompt": "?", "expected": "no", "prediction": ANSWER}]
    result = run(name=HOSTILE_NAME, dataset=rows, scorers=[exact_match], store=store)
    report = build_report(store, result.id)
    for text in (render_text(report), render_markdown(report)):
        no_raw_controls(text)
    assert report.to_dict()["run"]["name"] == HOSTILE_NAME  # the data itself is untouched


@given(st.text())
def test_printable_leaves_no_control_character(text: str) -> None:
    shown = printable(text)
    assert not RAW.search(shown)
    if not ESCAPED.search(text):
        assert shown == text


@pytest.mark.slow
def test_show_escapes_lone_surrogates(tmp_path: Path, in_process: Cli) -> None:
    # JSON's "\udc80" is a lone surrogate once read: no UTF-8 output can take it as it is
    (tmp_path / "rows.jsonl").write_text(
        '{"id": "s-1", "prompt": "lone \\udc80 x", "expected": "exp \\ud800 end",'
        ' "prediction": "exp \\ud800 end"}\n'
    )
    (tmp_path / "sur.yaml").write_text("name: sur\ndataset: rows.jsonl\nscorers: [exact_match]\n")
    assert in_process("run", "sur.yaml", "--db", "s.db", cwd=tmp_path).returncode == 0
    # shown by processes of their own: what a pipe takes of text no UTF-8 can hold
    printed = {}
    for args in (("show", "sur"), ("show", "sur", "--full"), ("report", "sur")):
        shown = aieval(*args, "--db", "s.db", cwd=tmp_path)
        assert shown.returncode == 0 and "Traceback" not in shown.stderr, (args, shown.stderr)
        printed[args] = shown.stdout
    shown_text = printed[("show", "sur")]
    assert "lone \\udc80 x" in shown_text and "exp \\ud800 end" in shown_text
