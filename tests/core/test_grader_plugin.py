"""A third-party grader, installed as a distribution with an ``aieval.graders`` entry point,
decides a real run's verdicts; they are stored, read back and reported."""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path

import pytest

from aieval import Store, run
from aieval.core import GraderRequest, load_grader
from aieval.errors import ConfigError
from aieval.report import build_report
from aieval.scorers import exact_match

_MODULE = '''
from aieval.core import GateOutcome, GradeInput, Reason, Verdict


class Brevity:
    """Passes an exact answer of at most ``limit`` words; grades A or F."""

    name = "brevity"

    def __init__(self, limit):
        self.limit = limit

    def grade(self, sample: GradeInput) -> Verdict:
        record = sample.record
        exact = record.scores["exact_match"].value == 1.0
        short = len((record.prediction or "").split()) <= self.limit
        reasons = () if exact else (Reason("threshold", "exact_match", "not exact"),)
        if not short:
            reasons += (Reason("gate", "short", f"more than {self.limit} words"),)
        passed = exact and short
        return Verdict(
            passed=passed,
            reasons=() if passed else reasons,
            weighted_score=100.0 if passed else 0.0,
            grade="A" if passed else "F",
            gates=(GateOutcome("short", short, None if short else "too long"),),
            grader=self.name,
        )


def factory(request):
    return Brevity(limit=3 if request.pass_threshold >= 0.5 else 10)
'''


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``brevity_grader`` installed in a folder on ``sys.path``, with its dist-info."""
    site = tmp_path / "site"
    (site / "brevity_grader-1.0.dist-info").mkdir(parents=True)
    (site / "brevity_grader.py").write_text(textwrap.dedent(_MODULE), encoding="utf-8")
    info = site / "brevity_grader-1.0.dist-info"
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: brevity-grader\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[aieval.graders]\nbrevity = brevity_grader:factory\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()


ROWS = [
    {"id": "a", "prompt": "2+2?", "expected": "4", "prediction": "4"},
    {"id": "b", "prompt": "capital of France?", "expected": "Paris", "prediction": "Lyon"},
    {
        "id": "c",
        "prompt": "say it long",
        "expected": "one two three four",
        "prediction": "one two three four",
    },
]


def test_an_installed_grader_decides_a_runs_verdicts(installed: None, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    result = run(
        name="brevity", dataset=ROWS, scorers=[exact_match], store=str(db), grader="brevity"
    )
    by_id = {s.id: s for s in result.samples}
    assert {k: s.passed for k, s in by_id.items()} == {"a": True, "b": False, "c": False}
    # "c" is an exact answer: the threshold grader would have passed it
    assert by_id["c"].scores["exact_match"].value == 1.0
    assert all(s.verdict is not None and s.verdict.grader == "brevity" for s in by_id.values())
    store = Store(str(db))
    stored = {s.id: s for s in store.iter_samples(result.id)}
    assert {k: s.verdict for k, s in stored.items()} == {k: s.verdict for k, s in by_id.items()}
    report = build_report(store, result.id)
    assert report.graded is True
    assert report.grades == {"A": 1, "B": 0, "C": 0, "D": 0, "F": 2}
    assert report.pass_rate["passed"] == 1
    reasons = {(r["kind"], r["key"]): r["sample_ids"] for r in report.failure_reasons}
    assert reasons == {("threshold", "exact_match"): ["b"], ("gate", "short"): ["c"]}
    store.close()


def test_an_unknown_grader_is_refused_naming_the_group(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no grader named 'nope'.*aieval\.graders"):
        load_grader("nope", GraderRequest())


def test_the_threshold_grader_is_built_in() -> None:
    grader = load_grader("threshold", GraderRequest(pass_threshold=0.7))
    assert grader.name == "threshold"


def test_a_run_naming_an_unknown_grader_is_refused_before_anything_is_stored(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    with pytest.raises(ConfigError, match="no grader named 'nope'"):
        run(name="x", dataset=ROWS, scorers=[exact_match], store=str(db), grader="nope")
    if db.exists():
        store = Store(str(db))
        assert store.list_runs() == []
        store.close()
