"""``aieval compare --format github``: the comment's Markdown, its exit code, its options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from aieval import run
from aieval.report import COMMENT_LIMIT

AIEVAL = [sys.executable, "-m", "aieval"]


def _runs(db: Path) -> tuple[str, str]:
    rows = [{"id": f"q{i}", "input": f"p{i}", "expected": "yes"} for i in range(70)]
    base = run(
        name="qa", dataset=[{**r, "prediction": "yes"} for r in rows], scorers=["exact_match"],
        store=db,
    )  # fmt: skip
    bad = [{**r, "prediction": "no | <b>" if i < 20 else "yes"} for i, r in enumerate(rows)]
    cand = run(name="qa", dataset=bad, scorers=["exact_match"], store=db)
    return base.id, cand.id


def test_the_github_format_is_written_with_the_decision_and_links(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    base, cand = _runs(db)
    done = subprocess.run(
        [*AIEVAL, "compare", base, cand, "--db", str(db), "--format", "github",
         "--viewer-url", "https://evals.example.com", "-o", str(tmp_path / "c.md")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # blocked, as aieval compare always exits
    body = (tmp_path / "c.md").read_text()
    assert body.startswith("### ❌ aieval: **blocked** · qa") and len(body) < COMMENT_LIMIT
    assert f"(https://evals.example.com/#/compare/samples/q0?baseline={base}" in body
    assert "Top regressions (10 of 20)" in body and "&lt;b&gt;" in body


def test_a_viewer_url_with_another_format_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    base, cand = _runs(db)
    done = subprocess.run(
        [*AIEVAL, "compare", base, cand, "--db", str(db), "--viewer-url", "https://x.test"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--viewer-url applies to --format github only" in done.stderr
