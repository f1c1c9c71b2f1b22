"""``render_github``: the decision first, lists cut between rows to stay under GitHub's limit,
untrusted text escaped, links into the viewer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aieval import run
from aieval.errors import ConfigError
from aieval.report import COMMENT_LIMIT, compare_runs, example_texts, render_github
from aieval.store import Store

NASTY = "a|b `code` <!-- aieval:github-comment:aieval --> @octocat **bold** </details>"


def _runs(
    db: Path,
    n: int,
    wrong: set[int],
    *,
    ids: str = "ex-{i}",
    base_wrong: frozenset[int] = frozenset(),
) -> tuple[str, str]:
    def rows(bad: set[int]) -> list[dict[str, str]]:
        return [
            {
                "id": ids.format(i=i),
                "input": f"q {i} | {NASTY}",
                "expected": f"a{i}",
                "prediction": NASTY if i in bad else f"a{i}",
            }
            for i in range(n)
        ]

    base = run(name="qa", dataset=rows(set(base_wrong)), scorers=["exact_match"], store=db).id
    cand = run(name="qa", dataset=rows(wrong), scorers=["exact_match"], store=db).id
    return base, cand


def _cells(line: str) -> int:
    """Table cells of a Markdown row: pipes not escaped with a backslash, minus one."""
    return len(re.findall(r"(?<!\\)\|", line)) - 1


@pytest.mark.slow
def test_ten_thousand_regressions_stay_under_the_limit_cut_between_rows(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    n = 10_000
    base, cand = _runs(db, n, set(range(n)), ids="example|{i}|" + "x" * 40)
    store = Store(db)
    comparison = compare_runs(store, base, cand, max_examples=None)
    assert comparison.regressions_count == n
    body = render_github(
        comparison,
        viewer_url="https://evals.example.com/viewer/",
        texts=example_texts(store, comparison),
    )
    assert len(body) < COMMENT_LIMIT
    assert body.startswith("### ❌ aieval: **blocked** · qa")
    left_out = re.search(r"_([\d,]+) of 9,990 rows left out", body)
    assert left_out is not None
    shown = 9_990 - int(left_out.group(1).replace(",", ""))
    assert shown > 50
    rows = [line for line in body.splitlines() if line.startswith("| [example")]
    assert len(rows) == 10 + shown  # the top ten and the folded rest, each row whole
    assert all(_cells(line) == 5 and line.endswith(" |") for line in rows)
    assert body.count("<details>") == body.count("</details>")
    assert body.count("<!--") == 0 and "@octocat" not in body


def test_the_first_screen_has_the_decision_rules_interval_and_sample_size(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    base, cand = _runs(db, 30, {3}, base_wrong=frozenset({1, 2, 5}))  # better, on too few
    body = render_github(compare_runs(Store(db), base, cand))
    lines = body.splitlines()
    assert lines[0] == "### ❔ aieval: **inconclusive** · qa"
    first_screen = "\n".join(lines[:20])
    assert "`paired_examples`" in first_screen and "`weighted_score_noninferior`" in first_screen
    assert "one-sided 95% interval [" in first_screen and "margin −1" in first_screen
    assert "**To decide:** about" in first_screen and "paired examples" in first_screen


def test_sample_text_cannot_break_the_table_or_the_comment(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    base, cand = _runs(db, 70, {1, 2}, ids="id|{i}`<!--")
    store = Store(db)
    comparison = compare_runs(store, base, cand)
    body = render_github(comparison, texts=example_texts(store, comparison))
    table = [line for line in body.splitlines() if line.startswith("| id")]
    assert len(table) == 2 and all(_cells(line) == 5 for line in table)
    assert "<!--" not in body  # neither the marker nor a comment opener survives
    assert "@\u200boctocat" in body and "@octocat" not in body  # nobody is notified
    answers = body[body.index("Answers of the top regressions") :]
    assert "<pre>a|b `code` &lt;!-- aieval:github-comment:aieval --&gt;" in answers
    assert answers.count("<pre>") == answers.count("</pre>")
    assert "&lt;/details&gt;" in answers  # a closing tag in an answer closes nothing


def test_viewer_links_encode_the_example_id(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    base, cand = _runs(db, 10, {4}, ids="a b/{i})")
    body = render_github(compare_runs(Store(db), base, cand), viewer_url="http://127.0.0.1:8000")
    link = f"http://127.0.0.1:8000/#/compare/samples/a%20b%2F4%29?baseline={base}&candidate={cand}"
    assert f"[a b/4)]({link})" in body
    assert f"[open in the viewer](http://127.0.0.1:8000/#/compare?baseline={base}" in body


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "evals.example.com", "ftp://x", "https://x.test/a)b", "http://a b"],
)
def test_a_viewer_url_that_is_not_http_is_refused(tmp_path: Path, url: str) -> None:
    db = tmp_path / "runs.db"
    base, cand = _runs(db, 5, set())
    with pytest.raises(ConfigError, match="viewer URL"):
        render_github(compare_runs(Store(db), base, cand), viewer_url=url)


def test_reports_are_refused() -> None:
    with pytest.raises(ConfigError, match="renders comparisons"):
        render_github({"kind": "report", "run": {}})
