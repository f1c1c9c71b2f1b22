import math
from pathlib import Path

import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aieval.errors import ConfigError, DatasetError
from aieval.scorers.retrieval import (
    average_precision,
    evaluate_run,
    hit_at_k,
    load_qrels,
    load_trec_run,
    mrr,
    ndcg,
    precision_at_k,
    recall_at_k,
    retrieval_scorer,
)

DOCS = [f"d{i}" for i in range(12)]
K = 5
ORACLE = {
    "ndcg_cut_5": lambda r, q: ndcg(r, q, k=K),
    "map": lambda r, q: average_precision(r, q),
    "recip_rank": lambda r, q: mrr(r, q),
    "recall_5": lambda r, q: recall_at_k(r, q, k=K),
    "P_5": lambda r, q: precision_at_k(r, q, k=K),
    "success_5": lambda r, q: hit_at_k(r, q, k=K),
}


@st.composite
def query(draw: st.DrawFn) -> tuple[list[str], dict[str, int]]:
    ranking = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=10))
    judged = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), min_size=1))
    return ranking, judged


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(query())
def test_matches_pytrec_eval(case: tuple[list[str], dict[str, int]]) -> None:
    ranking, judged = case
    if not ranking or not any(g > 0 for g in judged.values()):
        return
    run = {"q": {doc: float(len(ranking) - i) for i, doc in enumerate(ranking)}}
    oracle = pytrec_eval.RelevanceEvaluator(
        {"q": judged}, {"ndcg_cut", "map", "recip_rank", "recall", "P", "success"}
    )
    want = oracle.evaluate(run)["q"]
    for measure, ours in ORACLE.items():
        assert ours(ranking, judged) == pytest.approx(want[measure], abs=1e-4), measure


@given(query(), st.integers(1, 12))
def test_bounds_and_zero_division(case: tuple[list[str], dict[str, int]], k: int) -> None:
    ranking, judged = case
    metrics = (ndcg, recall_at_k, precision_at_k, hit_at_k)
    for metric in metrics:
        value = metric(ranking, judged, k)
        assert 0.0 <= value <= 1.0
    for metric in (*metrics, average_precision, mrr):
        assert metric(ranking, {}, 3, zero_division=0.25) == 0.25


def test_design_example() -> None:
    want = (2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert ndcg(ranking=["d3", "d1"], qrels={"d1": 2, "d7": 1}, k=10) == pytest.approx(want)


def test_duplicates_count_once() -> None:
    assert precision_at_k(["a", "a", "b"], {"a"}, k=2) == 0.5
    assert average_precision(["a", "a", "b"], ["a", "b"]) == pytest.approx(1.0)


def test_bad_k() -> None:
    with pytest.raises(ConfigError, match="k must be"):
        ndcg(["a"], {"a": 1}, k=0)


def test_trec_files_match_pytrec_eval(tmp_path: Path) -> None:
    qrels_path = tmp_path / "qrels.txt"
    run_path = tmp_path / "run.txt"
    qrels_path.write_text("q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 x 1\nq3 0 z 0\n")
    run_path.write_text(
        "q1 Q0 b 1 3.5 sys\nq1 Q0 c 2 2.0 sys\nq1 Q0 a 3 1.0 sys\n"
        "q2 Q0 y 1 9 sys\nq2 Q0 x 2 8 sys\nq9 Q0 a 1 1 sys\n"
    )
    qrels, run = load_qrels(qrels_path), load_trec_run(run_path)
    assert run["q1"] == ["b", "c", "a"]
    report = evaluate_run(run, qrels, ["ndcg@10", "map", "mrr"])
    assert report.skipped == ["q3"]
    scored = {q: {d: float(-i) for i, d in enumerate(r)} for q, r in run.items()}
    int_qrels = {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()}
    oracle = pytrec_eval.RelevanceEvaluator(int_qrels, {"ndcg_cut", "map", "recip_rank"})
    want = oracle.evaluate(scored)
    for qid in ("q1", "q2"):
        assert report.per_query[qid]["ndcg@10"] == pytest.approx(want[qid]["ndcg_cut_10"])
        assert report.per_query[qid]["map"] == pytest.approx(want[qid]["map"])
    assert report.means["mrr"] == pytest.approx((1 / 2 + 1 / 2) / 2)


def test_missing_judged_query_scores_zero() -> None:
    report = evaluate_run({}, {"q1": {"a": 1}}, ["hit@3"])
    assert report.means == {"hit@3": 0.0}


@pytest.mark.parametrize(
    ("text", "match"),
    [
        pytest.param("q1 0 a\n", "line 1: expected 4 columns", id="short-row"),
        pytest.param("q1 0 a 1\nq1 0 b high\n", "line 2: relevance 'high'", id="bad-grade"),
    ],
)
def test_bad_qrels_name_line(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    with pytest.raises(DatasetError, match=match):
        load_qrels(path)


def test_bad_run_and_metric(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 x tag\n")
    with pytest.raises(DatasetError, match=r"run\.txt, line 1: score"):
        load_trec_run(path)
    with pytest.raises(ConfigError, match="unknown retrieval metric"):
        evaluate_run({}, {}, ["bleu"])
    with pytest.raises(ConfigError, match="needs a cutoff"):
        retrieval_scorer("precision")


@pytest.mark.parametrize(
    "prediction",
    [
        pytest.param(["d2", "d1"], id="list"),
        pytest.param('["d2", "d1"]', id="json"),
        pytest.param("d2\nd1\n", id="lines"),
        pytest.param({"ranking": [{"id": "d2"}, {"id": "d1"}]}, id="dict"),
    ],
)
async def test_scorer_reads_predictions(prediction: object) -> None:
    score = retrieval_scorer("mrr")
    assert score.name == "mrr"
    assert (await score.score(prediction, {"d1": 1})).value == 0.5
