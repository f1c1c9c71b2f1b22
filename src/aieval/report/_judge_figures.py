"""The judges' figures of reports and comparisons, read from a store as ``aieval judges`` reads
them: per judge its agreement with reviewers, certification and the raw vs corrected pass rate.

One computation: :func:`aieval.judges.stored_summaries` (what ``aieval judges`` prints) on
the store where the report is built.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from aieval.judges import (
    DEFAULT_KAPPA_FLOOR,
    DEFAULT_MIN_LABELS,
    JudgeRun,
    JudgeSummary,
    judge_verdicts,
    run_judges,
    run_rate,
    stored_summaries,
)
from aieval.store import RunRow, Store

__all__ = ["JudgeFigures", "compared_judge_figures", "run_judge_figures"]


@dataclass(frozen=True, slots=True)
class JudgeFigures:
    """Per judge of a run (or of a comparison's two runs): the summary ``aieval judges`` gives,
    decided at ``floor`` and ``min_labels``; the report's ``judge_figures`` section.

    ``start`` names, per scorer, the run a review queue could be built from (for the hint a
    judge without labels gets).
    """

    summaries: tuple[JudgeSummary, ...]
    floor: float
    min_labels: int
    start: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: each judge as ``aieval judges --json`` prints it, and for a judge
        without labels the command that starts its review."""
        judges = []
        for summary in self.summaries:
            entry = summary.to_dict()
            if summary.certification is None:
                entry["start"] = f"aieval review create {self.start} --scorer {summary.key.scorer}"
            judges.append(entry)
        return {"floor": self.floor, "min_labels": self.min_labels, "judges": judges}


def run_judge_figures(
    store: Store,
    row: RunRow,
    *,
    floor: float = DEFAULT_KAPPA_FLOOR,
    min_labels: int = DEFAULT_MIN_LABELS,
) -> JudgeFigures | None:
    """The judges of one stored run with their figures; ``None`` when the run has no judge
    scorer (the report then has no section)."""
    if not run_judges(row.config):
        return None
    runs = [JudgeRun(row.id, row.config, list(store.iter_samples(row.id, texts=False)))]
    summaries = stored_summaries(store, runs, floor=floor, min_labels=min_labels, pool=True)
    return JudgeFigures(tuple(summaries), floor, min_labels, row.id)


def compared_judge_figures(
    stores: tuple[Store, Store],
    rows: tuple[RunRow, RunRow],
    *,
    floor: float = DEFAULT_KAPPA_FLOOR,
    min_labels: int = DEFAULT_MIN_LABELS,
) -> JudgeFigures | None:
    """The judges of a comparison (baseline, candidate; ``stores`` and ``rows`` in that
    order), figured on the candidate's store as the ``certified_judges`` rule figures them;
    each run's raw and corrected rate beside them. ``None`` when neither run has a judge.

    A baseline from another store lends its verdicts to no agreement figure: it only gets its
    rate, corrected with the candidate store's figures.
    """
    base_row, cand_row = rows
    if not run_judges(base_row.config) and not run_judges(cand_row.config):
        return None
    same = stores[0] is stores[1]
    samples = [
        list(store.iter_samples(row.id, texts=False)) if same or store is stores[1] else []
        for store, row in zip(stores, rows, strict=True)
    ]
    runs = [JudgeRun(row.id, row.config, s) for row, s in zip(rows, samples, strict=True)]
    summaries = stored_summaries(stores[1], runs, floor=floor, min_labels=min_labels, pool=True)
    if not same:
        summaries = [_elsewhere(s, stores[0], base_row) for s in summaries]
    return JudgeFigures(tuple(summaries), floor, min_labels, cand_row.id)


def _elsewhere(summary: JudgeSummary, store: Store, row: RunRow) -> JudgeSummary:
    """``summary`` with the baseline's rate read from its own store."""
    digest = summary.key.digest
    threshold = next((t for k, t in run_judges(row.config) if k.digest == digest), None)
    if threshold is None:
        return summary
    verdicts = judge_verdicts(
        store.iter_samples(row.id, texts=False), summary.key.scorer, run_id=row.id,
        threshold=threshold,
    )  # fmt: skip
    rates = tuple(
        run_rate(row.id, verdicts, summary.certification) if r.run_id == row.id else r
        for r in summary.runs
    )
    return replace(summary, runs=rates)
