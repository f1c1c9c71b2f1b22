"""Rows' own checks in real runs: scored on their rows only, graded with their thresholds and
weights, stored, reported with their coverage and compared where both runs have them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aieval import run
from aieval.errors import ConfigError, DatasetError
from aieval.report import build_report, compare_runs, render_text
from aieval.runner import load_eval, parse_eval, run_eval
from aieval.scorers import exact_match
from aieval.store import Store


def _rows(n: int = 20, checked: tuple[int, ...] = (1, 5, 9)) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(n):
        row: dict[str, Any] = {
            "id": f"r{i}",
            "input": f"q{i}",
            "expected": f"answer {i}",
            "prediction": f"answer {i}" if i != 9 else "no refund, sorry",
        }
        if i in checked:
            row["checks"] = [{"icontains": {"value": "refund"}}, {"word_count": {"max_words": 2}}]
        rows.append(row)
    return rows


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_row_checks_score_their_rows_only(tmp_path: Path) -> None:
    data = _write_jsonl(tmp_path / "data.jsonl", _rows())
    result = run(name="rows", dataset=data, scorers=[exact_match], store=tmp_path / "runs.db")
    by_id = {s.id: s for s in result.samples}
    assert set(by_id["r0"].scores) == {"exact_match"}
    assert set(by_id["r1"].scores) == {"exact_match", "row:icontains", "row:word_count"}
    assert by_id["r1"].scores["row:icontains"].value == 0.0
    assert by_id["r1"].passed is False
    reasons = [(r.kind, r.key) for r in by_id["r1"].verdict.reasons]
    assert reasons == [("threshold", "row:icontains")]
    assert by_id["r9"].scores["row:icontains"].value == 1.0
    assert by_id["r9"].scores["row:word_count"].value == 0.0  # three words
    assert by_id["r0"].passed is True
    # coverage: three rows carry the checks, none is counted missing on the other 17
    stats = result.summary.scorers
    assert stats["row:icontains"].to_dict() == {
        "mean": pytest.approx(1 / 3),
        "std": pytest.approx(0.5773502691896257),
        "count": 3,
        "errors": 0,
        "missing": 0,
        "not_applicable": 0,
    }
    assert stats["exact_match"].count == 20
    assert result.error_count == 0
    # the store keeps them and the report shows n=3, no errors
    with Store(tmp_path / "runs.db") as db:
        stored = {s.id: s for s in db.iter_samples(result.id)}
        assert stored["r9"].scores == by_id["r9"].scores
        assert stored["r1"].verdict == by_id["r1"].verdict
        report = build_report(db, result.id)
    rows = {c["name"]: c for c in report.criteria}
    assert (rows["row:icontains"]["n"], rows["row:icontains"]["errors"]) == (3, 0)
    assert (rows["exact_match"]["n"], rows["exact_match"]["errors"]) == (20, 0)
    assert "row:icontains" in render_text(report)


def test_row_checks_have_their_own_threshold_and_weight() -> None:
    rows = [
        {
            "id": "a",
            "input": "q",
            "prediction": "one two three",
            "expected": "one two three",
            "assert": [
                {"python": {"expression": "1 / (len(output.split()) + 1)", "threshold": 0.2}},
                {"contains": {"value": "two", "weight": 3}},
            ],
        }
    ]
    result = run(name="own", dataset=rows, scorers=[exact_match], store=False)
    (sample,) = result.samples
    assert sample.scores["row:python"].value == 0.25
    assert sample.passed is True  # 0.25 meets its own 0.2, not the run-wide 0.5
    assert sample.verdict.weights == {"row:contains": 3.0}
    assert sample.verdict.weighted_score == pytest.approx(100 * (1 + 0.25 + 3) / 5)


def test_a_bad_row_option_is_that_rows_error_not_a_crashed_run(tmp_path: Path) -> None:
    rows = _rows(4, checked=())
    rows[2]["checks"] = [{"contains": {"valeu": "x"}}, {"is_xml": {"threshold": 2}}]
    result = run(name="bad", dataset=rows, scorers=[exact_match], store=tmp_path / "runs.db")
    assert result.status == "completed"
    by_id = {s.id: s for s in result.samples}
    bad = by_id["r2"].scores
    assert bad["row:contains"].error == (
        "row 'r2' checks[0]: contains.valeu: unknown key; did you mean value?"
    )
    assert bad["row:is_xml"].error is not None
    assert bad["row:is_xml"].error.startswith("row 'r2' checks[1]: is_xml.threshold: must be in")
    assert by_id["r2"].passed is False
    assert [r.kind for r in by_id["r2"].verdict.reasons] == ["error", "error"]
    assert result.error_count == 1
    assert all(by_id[i].passed for i in ("r0", "r1", "r3"))


def test_an_unknown_row_check_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    rows = _rows(3, checked=())
    rows[1]["checks"] = ["is_xlm"]
    data = _write_jsonl(tmp_path / "data.jsonl", rows)
    with pytest.raises(DatasetError, match=r"data\.jsonl.*line 2.*unknown scorer 'is_xlm'"):
        run(name="typo", dataset=data, scorers=[exact_match], store=tmp_path / "runs.db")
    with Store(tmp_path / "runs.db") as db:
        assert db.list_runs() == []


def test_csv_and_yaml_rows_with_checks_and_default_checks(tmp_path: Path) -> None:
    cell = json.dumps([{"icontains": {"value": "refund"}}]).replace('"', '""')
    (tmp_path / "data.csv").write_text(
        "id,input,expected,prediction,checks\n"
        'a,q,x,"Refund sent",\n'
        f'b,q,x,"Refund sent","{cell}"\n',
        encoding="utf-8",
    )
    (tmp_path / "csv.yaml").write_text(
        """
name: csv-checks
dataset: data.csv
scorers: []
default_checks:
  - word_count: {max_words: 5}
""",
        encoding="utf-8",
    )
    (result,) = run_eval(load_eval(tmp_path / "csv.yaml"), store=tmp_path / "runs.db")
    by_id = {s.id: s for s in result.samples}
    assert set(by_id["a"].scores) == {"word_count"}
    assert set(by_id["b"].scores) == {"word_count", "row:icontains"}
    assert all(s.passed for s in result.samples)

    (tmp_path / "rows.yaml").write_text(
        """
name: yaml-checks
dataset:
  rows:
    - {id: a, input: q, prediction: "<a>ok</a>"}
    - id: b
      input: q
      prediction: "not xml"
      assert:
        - is_xml
        - icontains: {value: xml, name: says_xml}
scorers: []
default_checks: [{word_count: {max_words: 3}}]
""",
        encoding="utf-8",
    )
    (result,) = run_eval(load_eval(tmp_path / "rows.yaml"), store=tmp_path / "runs.db")
    by_id = {s.id: s for s in result.samples}
    assert by_id["a"].passed is True and set(by_id["a"].scores) == {"word_count"}
    assert {k: v.value for k, v in by_id["b"].scores.items()} == {
        "word_count": 1.0,
        "row:is_xml": 0.0,
        "row:says_xml": 1.0,
    }
    with Store(tmp_path / "runs.db") as db:
        row = db.get_run(result.id)
        assert row is not None
        assert [e["name"] for e in row.config["scorers"]] == ["word_count"]


def test_scorers_may_be_empty_only_when_every_row_has_checks(tmp_path: Path) -> None:
    every = [
        {"id": "a", "input": "q", "prediction": "x", "checks": ["is_xml"]},
        {"id": "b", "input": "q", "prediction": "<a/>", "checks": ["is_xml"]},
    ]
    config = parse_eval({"name": "rows-only", "dataset": {"rows": every}, "scorers": []})
    (result,) = run_eval(config, store=False)
    assert [s.passed for s in result.samples] == [False, True]
    some = [*every, {"id": "c", "input": "q", "prediction": "x"}]
    # inline rows are looked at when the file is read
    with pytest.raises(ConfigError, match=r"scorers: give at least one scorer"):
        parse_eval({"name": "rows-only", "dataset": {"rows": some}, "scorers": []})
    with pytest.raises(ConfigError, match=r"scorers: give at least one scorer"):
        parse_eval({"name": "nothing", "dataset": {"rows": some}})
    # and run() refuses them too
    with pytest.raises(ConfigError, match=r"give at least one scorer.*1 of 3 rows carry no"):
        run(name="rows-only", dataset=some, scorers=[], store=False)
    assert parse_eval({"name": "d", "dataset": {"rows": every}}).scorers == []
    assert parse_eval({"name": "d", "dataset": {"rows": some}, "default_checks": ["is_xml"]})
    # a dataset file is read to look for the rows' checks
    _write_jsonl(tmp_path / "some.jsonl", some)
    _write_jsonl(tmp_path / "every.jsonl", every)
    (tmp_path / "eval.yaml").write_text("name: f\ndataset: every.jsonl\nscorers: []\n")
    (result,) = run_eval(load_eval(tmp_path / "eval.yaml"), store=False)
    assert [s.passed for s in result.samples] == [False, True]
    (tmp_path / "eval.yaml").write_text("name: f\ndataset: some.jsonl\nscorers: []\n")
    with pytest.raises(ConfigError, match=r"eval\.yaml: scorers: give at least one scorer"):
        load_eval(tmp_path / "eval.yaml")
    (tmp_path / "eval.yaml").write_text("name: f\ndataset: none.jsonl\nscorers: []\n")
    with pytest.raises(ConfigError, match=r"could not be read .* file not found"):
        load_eval(tmp_path / "eval.yaml")


def test_rows_checks_may_name_a_scorer_of_the_evals_own_imports(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(
        "from aieval import scorer\n\n\n@scorer\ndef says_yes_rowcheck(prediction, expected):\n"
        "    return 1.0 if 'yes' in prediction else 0.0\n"
    )
    rows = [
        {"id": "a", "input": "q", "prediction": "yes", "checks": ["says_yes_rowcheck"]},
        {"id": "b", "input": "q", "prediction": "no", "checks": ["says_yes_rowcheck"]},
    ]
    _write_jsonl(tmp_path / "rows.jsonl", rows)
    (tmp_path / "eval.yaml").write_text(
        "name: mine\ndataset: rows.jsonl\nscorers: []\nimports: [mine.py]\n"
    )
    (result,) = run_eval(load_eval(tmp_path / "eval.yaml"), store=False)
    assert [s.passed for s in result.samples] == [True, False]


def test_default_checks_share_the_scorers_names(tmp_path: Path) -> None:
    config = parse_eval(
        {
            "name": "dup",
            "dataset": {"rows": _rows(2, checked=())},
            "scorers": ["exact_match"],
            "default_checks": ["exact_match"],
        }
    )
    with pytest.raises(ConfigError, match="two scorers share the name 'exact_match'"):
        run_eval(config, store=False)


def test_compare_pairs_row_checks_where_both_runs_have_them(tmp_path: Path) -> None:
    db_path = tmp_path / "runs.db"
    base = run(name="cmp", dataset=_rows(30, checked=(1, 2)), scorers=[exact_match], store=db_path)
    cand = run(
        name="cmp", dataset=_rows(30, checked=(1, 2, 3)), scorers=[exact_match], store=db_path
    )
    with Store(db_path) as db:
        comparison = compare_runs(db, base.id, cand.id)
    metrics = {m["name"]: m for m in comparison.metrics}
    icontains = metrics["row:icontains"]
    assert icontains["n"] == 2  # rows 1 and 2: both runs checked them
    assert (icontains["baseline_missing"], icontains["candidate_missing"]) == (1, 0)
    assert metrics["exact_match"]["n"] == 30


def test_a_failed_target_leaves_row_checks_uncounted(tmp_path: Path) -> None:
    rows = _rows(3, checked=(1,))
    rows[1].pop("prediction")
    rows[1]["recorded_error"] = "the model timed out"
    result = run(name="err", dataset=rows, scorers=[exact_match], store=False)
    stats = result.summary.scorers
    assert stats["exact_match"].missing == 1
    assert "row:icontains" not in stats
    assert result.samples[1].passed is False


def test_compare_weighs_only_the_row_checks_both_sides_have(tmp_path: Path) -> None:
    db_path = tmp_path / "runs.db"
    rows = _rows(30, checked=(1,))
    base = run(name="even", dataset=rows, scorers=[exact_match], store=db_path)
    more = _rows(30, checked=(1, 3))  # row 3 gains checks it fails (no 'refund')
    cand = run(name="even", dataset=more, scorers=[exact_match], store=db_path)
    with Store(db_path) as db:
        comparison = compare_runs(db, base.id, cand.id)
    assert any("1 paired example(s) carry a row's own check" in w for w in comparison.warnings)
    # row 3: exact_match 1.0 on both sides: its weighted score does not move, though it now
    # fails the candidate's own check (its pass flag is what the verdict says)
    (r3,) = [r for r in comparison.regressions if r["id"] == "r3"]
    assert r3["delta"] == 0.0
    assert (r3["baseline"]["passed"], r3["candidate"]["passed"]) == (True, False)
    weighted = {m["name"]: m for m in comparison.metrics}["weighted_score"]
    assert weighted["delta"] == pytest.approx(0.0)
