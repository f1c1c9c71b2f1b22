"""The Markdown and HTML run reports draw a code evaluation's ``code`` section, escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.support.cli import Cli

from aieval import Store
from aieval.code import evaluate_code
from aieval.report import build_report, render_html, render_markdown, render_text
from aieval.sandbox import SandboxLimits

ADD = {
    "prompt": "def add(a, b):\n",
    "entry_point": "add",
    "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
}
GOOD, BAD = "    return a + b\n", "    return a * b\n"
# sleeps rather than spins, so the endless one does not slow the others on a busy machine
SLOW = "    import time\n    while True:\n        time.sleep(1)\n"
HOSTILE = "p\x1b[2J<script>alert(1)</script>"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]")


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A stored run: p0 passes 3 of 4, the hostile id passes 1 of 4 (one timeout)."""
    db = tmp_path_factory.mktemp("code") / "runs.db"
    result = evaluate_code(
        [{**ADD, "task_id": "p0"}, {**ADD, "task_id": HOSTILE}],
        n=4,
        k=[1, 2, 4],
        completions={"p0": [GOOD, GOOD, GOOD, BAD], HOSTILE: [GOOD, BAD, BAD, SLOW]},
        allow_code_execution=True,
        limits=SandboxLimits(timeout=10.0),  # only the endless one may time out
        store=db,
        name="ce1",
    )
    return db, result.run.id


def _report(stored: tuple[Path, str]) -> dict[str, object]:
    db, run_id = stored
    return build_report(Store(db), run_id).to_dict()


def test_markdown_has_pass_at_k_with_its_estimator_and_each_problem(
    stored: tuple[Path, str],
) -> None:
    doc = _report(stored)
    text = render_markdown(doc)
    code = doc["code"]
    assert isinstance(code, dict)
    for k in ("1", "2", "4"):
        value = code["pass_at_k"][k]["value"]
        assert re.search(rf"\| pass@{k} \| {value:.3f} \| \[", text), k
    assert "unbiased estimator" in text and "bootstrap" in text
    assert "| p0 | 3/4 | 3 | 1 | 0 | 0 | 0 |" in text
    assert "1/4 | 1 | 2 | 1 | 0 | 0 |" in text
    assert "8 executions" in text and "timeout 1" in text
    assert "<script" not in text and "&lt;script&gt;" in text
    assert not RAW.findall(text)


def test_html_has_pass_at_k_and_each_problem(stored: tuple[Path, str]) -> None:
    doc = _report(stored)
    page = render_html(doc)
    assert "<h2>Code evaluation</h2>" in page
    for k in ("1", "2", "4"):
        assert f"pass@{k}</td>" in page or f"pass@{k}</th>" in page, k
    assert "unbiased estimator" in page
    assert '<code>p0</code></td><td class="n">3/4</td>' in page
    assert "<script" not in page and "&lt;script&gt;" in page
    assert not RAW.findall(page)  # sample ids elsewhere on the page are escaped too


def test_text_has_pass_at_k_and_each_problem(stored: tuple[Path, str]) -> None:
    doc = _report(stored)
    text = render_text(doc, width=160)
    assert "Code evaluation · 8 executions" in text and "timeout 1" in text
    assert re.search(r"pass@4\s+│\s+1\.000", text), text
    assert re.search(r"p0\s+│\s+3/4\s+│\s+3\s+│\s+1\s+│", text), text
    assert "unbiased estimator" in text
    assert not RAW.findall(text) and "\\x1b" in text  # the id's escape shown, not obeyed


def test_a_run_without_code_section_draws_none(tmp_path: Path) -> None:
    from aieval import run
    from aieval.scorers import exact_match

    rows = [{"prompt": "2+2?", "expected": "4", "prediction": "4"}]
    plain = run(name="qa", dataset=rows, scorers=[exact_match], store=tmp_path / "r.db")
    doc = build_report(Store(tmp_path / "r.db"), plain.id).to_dict()
    assert "pass@" not in render_markdown(doc) and "pass@" not in render_html(doc)
    assert "pass@" not in render_text(doc)


def test_the_cli_report_draws_it(stored: tuple[Path, str], in_process: Cli) -> None:
    db, _ = stored
    argv = ["report", "ce1", "--db", str(db)]
    md = in_process(*argv, "-f", "md")
    assert md.returncode == 0, md.stderr
    assert "| pass@4 |" in md.stdout and "| p0 | 3/4 |" in md.stdout
    page = in_process(*argv, "-f", "html")
    assert page.returncode == 0, page.stderr
    assert "pass@4" in page.stdout
    data = json.loads(in_process(*argv, "-f", "json").stdout)
    assert data["code"]["pass_at_k"]["4"]["value"] == 1.0
