"""Retrieval ranking metrics (trec_eval conventions), TREC file readers and scorer factories.

Every metric takes one query's ``ranking`` (document ids, best first) and its ``qrels``
(document id -> graded relevance; a plain collection of ids means relevance 1). A document is
relevant when its grade is at least ``relevance_level`` (1). Duplicate ids in a ranking count
once, at their first position. When a query has no relevant document the metric is undefined
and returns ``zero_division`` (0.0), as scikit-learn does.

Example:
    >>> round(ndcg(ranking=["d3", "d1"], qrels={"d1": 2, "d7": 1}, k=10), 4)
    0.4796
    >>> mrr(["d3", "d1"], {"d1": 1})
    0.5
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval.errors import ConfigError, DatasetError
from aieval.scorers._scorer import Scorer

__all__ = [
    "RetrievalReport",
    "average_precision",
    "evaluate_run",
    "hit_at_k",
    "load_qrels",
    "load_trec_run",
    "mrr",
    "ndcg",
    "precision_at_k",
    "recall_at_k",
    "retrieval_scorer",
]

Qrels = Mapping[str, float] | Collection[str]


def _grades(qrels: Qrels) -> dict[str, float]:
    if isinstance(qrels, Mapping):
        return {str(doc): float(grade) for doc, grade in qrels.items()}
    return {str(doc): 1.0 for doc in qrels}


def _unique(ranking: Iterable[str], k: int | None) -> list[str]:
    seen: dict[str, None] = {}
    for doc in ranking:
        seen.setdefault(str(doc), None)
    docs = list(seen)
    return docs if k is None else docs[:k]


def _check_k(k: int | None, metric: str) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ConfigError(f"{metric}: k must be a positive integer or None, got {k!r}")


def _relevant(grades: dict[str, float], level: float) -> set[str]:
    return {doc for doc, grade in grades.items() if grade >= level}


def ndcg(
    ranking: Sequence[str],
    qrels: Qrels,
    k: int | None = 10,
    *,
    zero_division: float = 0.0,
) -> float:
    """nDCG@k with linear gains and a log2 discount (trec_eval's ``ndcg_cut``).

    ``DCG = sum(grade_i / log2(i + 1))`` over the top ``k``; the ideal ranking sorts every
    judged document by grade. Negative grades count as 0.
    """
    _check_k(k, "ndcg")
    grades = {doc: max(grade, 0.0) for doc, grade in _grades(qrels).items()}
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    if idcg == 0.0:
        return zero_division
    dcg = sum(grades.get(doc, 0.0) / math.log2(i + 2) for i, doc in enumerate(_unique(ranking, k)))
    return dcg / idcg


def average_precision(
    ranking: Sequence[str],
    qrels: Qrels,
    k: int | None = None,
    *,
    relevance_level: float = 1,
    zero_division: float = 0.0,
) -> float:
    """Average precision (MAP for one query): mean precision at each relevant hit.

    Divides by every relevant document, retrieved or not, as trec_eval's ``map`` does.
    """
    _check_k(k, "average_precision")
    relevant = _relevant(_grades(qrels), relevance_level)
    if not relevant:
        return zero_division
    hits, total = 0, 0.0
    for i, doc in enumerate(_unique(ranking, k), start=1):
        if doc in relevant:
            hits += 1
            total += hits / i
    return total / len(relevant)


def mrr(
    ranking: Sequence[str],
    qrels: Qrels,
    k: int | None = None,
    *,
    relevance_level: float = 1,
    zero_division: float = 0.0,
) -> float:
    """Reciprocal rank of the first relevant document (0.0 when none is retrieved)."""
    _check_k(k, "mrr")
    relevant = _relevant(_grades(qrels), relevance_level)
    if not relevant:
        return zero_division
    for i, doc in enumerate(_unique(ranking, k), start=1):
        if doc in relevant:
            return 1.0 / i
    return 0.0


def recall_at_k(
    ranking: Sequence[str],
    qrels: Qrels,
    k: int | None = 10,
    *,
    relevance_level: float = 1,
    zero_division: float = 0.0,
) -> float:
    """Share of the relevant documents found in the top ``k``."""
    _check_k(k, "recall_at_k")
    relevant = _relevant(_grades(qrels), relevance_level)
    if not relevant:
        return zero_division
    return len(relevant.intersection(_unique(ranking, k))) / len(relevant)


def precision_at_k(
    ranking: Sequence[str],
    qrels: Qrels,
    k: int = 10,
    *,
    relevance_level: float = 1,
    zero_division: float = 0.0,
) -> float:
    """Relevant documents in the top ``k``, divided by ``k`` (short rankings are not padded up).

    The denominator is always ``k``, as in trec_eval's ``P``; ``zero_division`` applies when
    the query has no relevant document.
    """
    _check_k(k, "precision_at_k")
    relevant = _relevant(_grades(qrels), relevance_level)
    if not relevant:
        return zero_division
    return len(relevant.intersection(_unique(ranking, k))) / k


def hit_at_k(
    ranking: Sequence[str],
    qrels: Qrels,
    k: int | None = 10,
    *,
    relevance_level: float = 1,
    zero_division: float = 0.0,
) -> float:
    """1.0 when a relevant document is in the top ``k`` (trec_eval's ``success``), else 0.0."""
    _check_k(k, "hit_at_k")
    relevant = _relevant(_grades(qrels), relevance_level)
    if not relevant:
        return zero_division
    return 1.0 if relevant.intersection(_unique(ranking, k)) else 0.0


_METRICS: dict[str, Callable[..., float]] = {
    "ndcg": ndcg,
    "map": average_precision,
    "ap": average_precision,
    "mrr": mrr,
    "recall": recall_at_k,
    "precision": precision_at_k,
    "p": precision_at_k,
    "hit": hit_at_k,
    "success": hit_at_k,
}


def _parse_metric(spec: str) -> tuple[str, Callable[..., float], int | None]:
    name, _, cut = spec.strip().lower().partition("@")
    if name not in _METRICS:
        known = ", ".join(sorted(_METRICS))
        raise ConfigError(f"unknown retrieval metric {spec!r}; use one of {known} with @k")
    if not cut:
        if _METRICS[name] is precision_at_k:
            raise ConfigError(f"retrieval metric {spec!r} needs a cutoff, e.g. {name}@10")
        default = 10 if _METRICS[name] in (ndcg, recall_at_k, hit_at_k) else None
        return spec, _METRICS[name], default
    if not cut.isdigit() or int(cut) < 1:
        raise ConfigError(f"retrieval metric {spec!r}: the cutoff after @ must be a positive int")
    return spec, _METRICS[name], int(cut)


@dataclass(slots=True, frozen=True)
class RetrievalReport:
    """Metrics over a set of queries.

    Attributes:
        means: metric -> mean over the evaluated queries.
        per_query: query id -> metric -> value.
        skipped: queries without any relevant judgment (not averaged; their metric is undefined).
    """

    means: dict[str, float]
    per_query: dict[str, dict[str, float]]
    skipped: list[str]


def evaluate_run(
    run: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Qrels],
    metrics: Sequence[str] = ("ndcg@10", "map", "mrr", "recall@10", "precision@10", "hit@10"),
    *,
    relevance_level: float = 1,
) -> RetrievalReport:
    """Evaluate ranked lists for many queries against their judgments.

    Every query with at least one relevant judgment is evaluated; a judged query missing from
    ``run`` retrieved nothing and scores 0 (trec_eval's ``-c``). Queries in ``run`` without
    judgments are ignored; judged queries without a relevant document are listed in
    ``skipped``.

    Example:
        >>> report = evaluate_run({"q1": ["a", "b"]}, {"q1": {"b": 1}}, ["mrr", "hit@1"])
        >>> report.means
        {'mrr': 0.5, 'hit@1': 0.0}
    """
    parsed = [_parse_metric(spec) for spec in metrics]
    per_query: dict[str, dict[str, float]] = {}
    skipped: list[str] = []
    for qid, judged in qrels.items():
        if not _relevant(_grades(judged), relevance_level):
            skipped.append(qid)
            continue
        ranking = run.get(qid, [])
        per_query[qid] = {
            spec: _call(fn, ranking, judged, cut, relevance_level) for spec, fn, cut in parsed
        }
    means = {
        spec: (sum(row[spec] for row in per_query.values()) / len(per_query) if per_query else 0.0)
        for spec, _, _ in parsed
    }
    return RetrievalReport(means=means, per_query=per_query, skipped=skipped)


def _call(
    fn: Callable[..., float], ranking: Sequence[str], judged: Qrels, k: int | None, level: float
) -> float:
    if fn is ndcg:
        return ndcg(ranking, judged, k)
    return fn(ranking, judged, k, relevance_level=level)


def load_qrels(path: str | Path) -> dict[str, dict[str, float]]:
    """Read a TREC qrels file: ``query_id iteration doc_id relevance`` per line.

    Raises:
        DatasetError: naming the file and line of a malformed row.
    """
    qrels: dict[str, dict[str, float]] = {}
    for line_no, fields in _rows(path, 4, "query_id iteration doc_id relevance"):
        try:
            grade = float(fields[3])
        except ValueError:
            raise DatasetError(
                f"relevance {fields[3]!r} is not a number", source=str(path), line=line_no
            ) from None
        qrels.setdefault(fields[0], {})[fields[2]] = grade
    return qrels


def load_trec_run(path: str | Path) -> dict[str, list[str]]:
    """Read a TREC run file: ``query_id Q0 doc_id rank score run_tag`` per line.

    Documents are ordered by descending score, ties by descending doc id, as trec_eval does
    (the rank column is ignored, like trec_eval).

    Raises:
        DatasetError: naming the file and line of a malformed row.
    """
    scored: dict[str, list[tuple[float, str]]] = {}
    for line_no, fields in _rows(path, 6, "query_id Q0 doc_id rank score run_tag"):
        try:
            score = float(fields[4])
        except ValueError:
            raise DatasetError(
                f"score {fields[4]!r} is not a number", source=str(path), line=line_no
            ) from None
        scored.setdefault(fields[0], []).append((score, fields[2]))
    return {qid: [doc for _, doc in sorted(rows, reverse=True)] for qid, rows in scored.items()}


def _rows(path: str | Path, width: int, layout: str) -> Iterable[tuple[int, list[str]]]:
    try:
        handle = Path(path).open(encoding="utf-8")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise DatasetError(f"cannot read: {exc.strerror}", source=str(path)) from exc
    with handle:
        for line_no, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != width:
                raise DatasetError(
                    f"expected {width} columns ({layout}), found {len(fields)}",
                    source=str(path),
                    line=line_no,
                )
            yield line_no, fields


def _as_ranking(prediction: Any) -> list[str]:
    if isinstance(prediction, str):
        text = prediction.strip()
        if text.startswith("["):
            try:
                prediction = json.loads(text)
            except ValueError:
                raise ConfigError(
                    "retrieval scorer: prediction looks like a JSON list but does not parse"
                ) from None
        else:
            return [line.strip() for line in text.splitlines() if line.strip()]
    if isinstance(prediction, Mapping):
        prediction = prediction.get("ranking", prediction.get("documents", []))
    if not isinstance(prediction, Iterable):
        raise ConfigError(f"retrieval scorer: cannot read a ranking from {type(prediction)}")
    return [str(item.get("id") if isinstance(item, Mapping) else item) for item in prediction]


def retrieval_scorer(metric: str = "ndcg@10", *, relevance_level: float = 1) -> Scorer:
    """A scorer computing one retrieval metric per sample, named after the metric.

    The prediction is the ranking: a list of ids (or of dicts with ``id``), a JSON list, one
    id per line, or a dict with a ``ranking`` list. The expected value is the qrels: a dict of
    id -> grade or a list of relevant ids.

    Example:
        >>> score = retrieval_scorer("recall@2")
        >>> score.name, score('["d1", "d9"]', ["d1", "d2"])
        ('recall@2', 0.5)
    """
    spec, fn, cut = _parse_metric(metric)

    def score(prediction: Any, expected: Any) -> float:
        if expected is None:
            raise ConfigError(f"{spec}: the example has no expected relevance judgments")
        return _call(fn, _as_ranking(prediction), expected, cut, relevance_level)

    return Scorer(score, name=spec)
