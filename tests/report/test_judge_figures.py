"""The "Judges" section of run reports and comparisons: per judge the figures ``aieval judges``
gives (agreement with intervals, base rate, status, raw vs corrected pass rate), in every
format; a judge without labels says how to start; a run without a judge has no section."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.support.cli import run_main
from tests.support.judged import write_judged_run

from aieval.core import JudgeKey, ReviewLabel
from aieval.report import (
    PromotionPolicy,
    build_report,
    compare_runs,
    comparison_schema,
    render_github,
    render_html,
    render_json,
    render_markdown,
    render_text,
    report_schema,
)
from aieval.store import NewReviewQueue, Store

N = 80
OPTIONS = {"judge_model": "m1", "prompt_version": "v1", "rubric_sha256": "cd" * 8}
CONFIG = {"scorers": [{"name": "faith", "options": OPTIONS}], "pass_threshold": 0.5}
KEY = JudgeKey.of("faith", OPTIONS)
# where the first reviewer disagrees with the judge; a second one labels every even item
DISAGREE = set(range(1, 60, 6))


def _judge_passes(i: int) -> bool:
    return i % 3 != 0


def _write(store: Store, run_id: str, config: dict[str, Any] = CONFIG) -> None:
    write_judged_run(store, run_id, config, N, _judge_passes)


def _labels(run_id: str) -> list[ReviewLabel]:
    first = [
        ReviewLabel(KEY.digest, run_id, f"ex{i}", "ana", passed=_judge_passes(i) != (i in DISAGREE))
        for i in range(60)
    ]
    second = [
        ReviewLabel(KEY.digest, run_id, f"ex{i}", "bo", passed=_judge_passes(i))
        for i in range(0, 60, 2)
    ]
    return first + second


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``base`` (labelled) and ``cand`` graded by one judge, ``other`` by an unlabelled judge,
    ``plain`` and ``plain2`` by no judge."""
    path = tmp_path_factory.mktemp("judge_figures") / "runs.db"
    other = {"scorers": [{"name": "tone", "options": {"judge_model": "m2"}}]}
    with Store(path) as store:
        _write(store, "base")
        _write(store, "cand")
        _write(store, "other", other)
        for plain in ("plain", "plain2"):
            _write(store, plain, {"scorers": [{"name": "faith", "options": {}}]})
        store.add_review_labels(_labels("base"))
    yield path


def _report(db: Path, run_id: str) -> dict[str, Any]:
    with Store(db) as store:
        data = build_report(store, run_id, n_resamples=100).to_dict()
    loaded: dict[str, Any] = json.loads(json.dumps(data))
    return loaded


def _cli_judges(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, db: Path, *runs: str
) -> list[dict[str, Any]]:
    done = run_main(capsys, monkeypatch, "judges", *runs, "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    loaded: list[dict[str, Any]] = json.loads(done.stdout)
    return loaded


def _shown(judge: dict[str, Any]) -> list[str]:
    """The figures as every format prints them."""
    agree = judge["certification"]["agreement"]
    [run] = judge["runs"]
    rate = run["corrected"]

    def ci(value: dict[str, float]) -> str:
        return f"{value['estimate']:.3f} ({value['low']:.3f}–{value['high']:.3f})"

    return [
        "faith@m1",
        judge["certification"]["status"],
        f"{agree['items']} ({agree['labels']} labels)",
        f"{agree['base_rate']:.3f}",
        ci(agree["judge_human_kappa"]),
        ci(agree["human_human_kappa"]),
        ci(agree["tpr"]),
        ci(agree["tnr"]),
        f"raw pass rate {rate['raw']:.1%}",
        f"corrected {rate['corrected']:.1%} ({rate['low']:.1%}–{rate['high']:.1%})",
    ]


def test_a_labelled_runs_report_has_the_figures_of_aieval_judges_in_every_format(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _report(db, "base")
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    section = data["judge_figures"]
    assert section["floor"] == 0.6 and section["min_labels"] == 100
    [judge] = section["judges"]
    # one computation: the section is what `aieval judges` prints, number for number
    assert [judge] == _cli_judges(capsys, monkeypatch, db, "base")
    agree = judge["certification"]["agreement"]
    assert agree["items"] == 60 and agree["human_human_items"] == 30
    assert judge["certification"]["status"] == "uncertified"
    assert judge["runs"][0]["corrected"]["n"] == N
    shown = _shown(judge)
    with Store(db) as store:
        report = build_report(store, "base", n_resamples=100)
    plain = " ".join(render_text(report, width=250).split())
    for rendered in (plain, render_markdown(report), render_html(report)):
        for part in shown:
            assert part in rendered, part
    assert json.loads(render_json(report))["judge_figures"] == section


def test_a_run_of_the_judge_pools_its_labels_on_other_runs_and_gets_its_own_rate(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    [judge] = _report(db, "cand")["judge_figures"]["judges"]
    [both] = _cli_judges(capsys, monkeypatch, db, "cand", "base")
    assert judge["certification"] == both["certification"]
    assert [r["run_id"] for r in judge["runs"]] == ["cand"]
    assert judge["runs"][0] == both["runs"][0]
    # `aieval judges cand` pools the judge's labels on base too: the report's figures exactly
    [alone] = _cli_judges(capsys, monkeypatch, db, "cand")
    assert alone["certification"] == judge["certification"]
    assert alone["runs"] == judge["runs"]


def test_a_judge_without_labels_gets_one_line_saying_how_to_start(db: Path) -> None:
    data = _report(db, "other")
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    [judge] = data["judge_figures"]["judges"]
    assert judge["certification"] is None and judge["judge"] == "tone@m2"
    assert judge["start"] == "aieval review create other --scorer tone"
    with Store(db) as store:
        report = build_report(store, "other", n_resamples=100)
    for rendered in (render_text(report, width=250), render_markdown(report), render_html(report)):
        assert "tone@m2: no agreement figures: no labels for this judge" in rendered
        assert "aieval review create other --scorer tone" in rendered
        assert "kappa judge-human" not in rendered


def test_a_run_without_a_judge_has_no_section(db: Path) -> None:
    data = _report(db, "plain")
    assert "judge_figures" not in data
    with Store(db) as store:
        report = build_report(store, "plain", n_resamples=100)
        assert "agreement with reviewers" not in render_text(report)
        compared = compare_runs(store, "plain", "plain2", n_resamples=100)
    assert "judge_figures" not in compared.to_dict()
    assert "agreement with reviewers" not in render_markdown(compared)


def test_a_comparison_shows_the_judges_once_with_both_runs_rates_in_every_format(
    db: Path,
) -> None:
    with Store(db) as store:
        policy = PromotionPolicy(judge_correction=True)
        comparison = compare_runs(store, "base", "cand", n_resamples=100, policy=policy)
    data = json.loads(json.dumps(comparison.to_dict()))
    jsonschema.Draft202012Validator(comparison_schema()).validate(data)
    [judge] = data["judge_figures"]["judges"]
    # one raw pass rate reads the same in the rule's reason and in the Judges section
    raws = [r["raw"] for r in judge["runs"]]
    rule = next(r for r in data["decision"]["rules"] if r["rule"] == "judge_corrected_pass_rate")
    assert f"raw {raws[1]:.1%} vs {raws[0]:.1%}" in rule["reason"]
    [alone] = _report(db, "base")["judge_figures"]["judges"]
    assert judge["certification"] == alone["certification"]
    assert [r["run_id"] for r in judge["runs"]] == ["base", "cand"]
    base_rate, cand_rate = (r["corrected"] for r in judge["runs"])
    for rendered in (
        " ".join(render_text(comparison, width=250).split()),
        render_markdown(comparison),
        render_html(comparison),
        render_github(comparison).replace("\u200b", ""),  # no @-mention in a comment
    ):
        assert "kappa judge-human" in rendered and "faith@m1" in rendered
        for rate, raw in zip((base_rate, cand_rate), raws, strict=True):
            assert f"corrected {rate['corrected']:.1%} ({rate['low']:.1%}–" in rendered
            assert f"raw pass rate {raw:.1%}" in rendered


def test_a_baseline_store_from_elsewhere_lends_no_labels(tmp_path: Path) -> None:
    with Store(tmp_path / "main.db") as main, Store(tmp_path / "cand.db") as candidate:
        _write(main, "base")
        main.add_review_labels(_labels("base"))  # the baseline's own store: not trusted
        _write(candidate, "cand")
        data = compare_runs(candidate, "base", "cand", baseline_store=main, n_resamples=100)
    [judge] = data.to_dict()["judge_figures"]["judges"]
    assert judge["certification"] is None and "no labels" in judge["problem"]
    assert [(r["run_id"], r["judged"]) for r in judge["runs"]] == [("base", N), ("cand", N)]


def test_a_judges_name_is_escaped_in_every_format(tmp_path: Path) -> None:
    name = "faith<img src=x>|[a](b)"
    config = {"scorers": [{"name": name, "options": OPTIONS}], "pass_threshold": 0.5}
    with Store(tmp_path / "runs.db") as store:
        _write(store, "r", config)
        _write(store, "s", config)
        report = build_report(store, "r", n_resamples=100)
        comparison = compare_runs(store, "r", "s", n_resamples=100)
    assert "&lt;img src=x&gt;" in render_html(report) and "<img src=x>" not in render_html(report)
    assert "<img src=x>" not in render_markdown(report)
    github = render_github(comparison)
    assert "Judges: agreement" in github and "<img src=x>" not in github


def test_a_review_queue_weights_the_figures_and_a_label_outside_it_says_why_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    with Store(db) as store:
        _write(store, "r")
        # 20 items stand for themselves, 40 for 1.5 samples each: the queue's design
        items = [("r", f"ex{i}", "near", 1.0) for i in range(20)]
        items += [("r", f"ex{i}", "far", 1.5) for i in range(20, 60)]
        store.create_review_queue(NewReviewQueue("q", KEY, ("r",), tuple(items)))
        store.add_review_labels(_labels("r"))
        weighted = build_report(store, "r", n_resamples=100)
    [judge] = weighted.to_dict()["judge_figures"]["judges"]
    assert judge["certification"]["agreement"]["weighted"] is True
    assert [json.loads(json.dumps(judge))] == _cli_judges(capsys, monkeypatch, db, "r")
    text = " ".join(render_text(weighted, width=250).split())
    assert "weighted by the review queues' design" in text
    kappa = judge["certification"]["agreement"]["judge_human_kappa"]
    assert f"{kappa['estimate']:.3f} ({kappa['low']:.3f}–{kappa['high']:.3f}) weighted" in text
    with Store(db) as store:
        store.add_review_labels([ReviewLabel(KEY.digest, "r", "ex70", "ana", passed=True)])
        unweighted = build_report(store, "r", n_resamples=100)
    [judge] = unweighted.to_dict()["judge_figures"]["judges"]
    assert judge["certification"]["agreement"]["weighted"] is False
    why = "1 labelled item(s) are in no review queue of this judge"
    for rendered in (render_text(unweighted, width=400), render_markdown(unweighted)):
        assert why in rendered and "weighted by the review queues' design" not in rendered
