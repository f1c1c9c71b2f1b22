"""The numbers of a run of plain verdicts read as columns (``Store.sample_columns``).

What :class:`~aieval.report._bundle._RunTally` would count sample by sample, counted from
arrays, in the same order (so every float sum and bootstrap sees the same values): only the
failed samples' verdicts (their reasons), judges' score metadata, and the ``extra`` and slice
metadata a report asks for are decoded.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import reduce
from json import loads
from typing import Any

import numpy as np

from aieval.core import Verdict
from aieval.core._records import split_epoch
from aieval.report._samples import ExampleNumbers
from aieval.report._tally import ColumnTally, GroupTally, JudgeTally, ReasonTally
from aieval.store import Store
from aieval.store._column_reads import SampleColumns, ScoreColumns

__all__ = ["BulkNumbers", "bulk_numbers", "judge_tallies"]


@dataclass(slots=True)
class BulkNumbers:
    """The counts and value lists of a run, as the tally holds them."""

    samples: int
    passed: int
    target_errors: int
    weighted: list[float]
    latency: list[float]
    cost_known: float
    cost_priced: int
    scorers: dict[str, ColumnTally]
    judges: dict[str, JudgeTally]
    reasons: ReasonTally
    slices: dict[str, dict[str, GroupTally]]
    epochs: dict[str, list[bool]]


def bulk_numbers(
    store: Store,
    run_id: str,
    slice_by: tuple[str, ...],
    slice_key: Callable[[Mapping[str, Any], str], str],
) -> BulkNumbers:
    """Count the run ``run_id`` (every sample a plain verdict) from its columns."""
    cols = store.sample_columns(run_id, metadata=bool(slice_by))
    n = len(cols.ids)
    scored = ~np.isnan(cols.weighted_score)
    costs = cols.cost[~np.isnan(cols.cost)].tolist()
    scorers, judged = store.score_columns(run_id, {i: p for p, i in enumerate(cols.ids)})
    return BulkNumbers(
        samples=n,
        passed=int(cols.passed.sum()),
        target_errors=int(cols.error.sum()),
        weighted=cols.weighted_score[scored].tolist(),
        latency=cols.latency_s[~np.isnan(cols.latency_s)].tolist(),
        cost_known=reduce(operator.add, costs, 0.0),  # in order, as the per-sample tally sums
        cost_priced=len(costs),
        scorers={name: _column(s) for name, s in scorers.items()},
        judges=judge_tallies(judged),
        reasons=_reasons(cols.ids, cols.failed_verdicts),
        slices=_slices(cols, slice_by, slice_key),
        epochs=_epochs(cols.ids, cols.passed, cols.extra),
    )


def _column(scores: ScoreColumns) -> ColumnTally:
    column = ColumnTally("scorer")
    column.values = scores.values[~scores.errors & ~scores.not_applicable].tolist()
    column.errors = int(scores.errors.sum())
    column.not_applicable = int(scores.not_applicable.sum())
    return column


def judge_tallies(judged: list[tuple[str, str, str | None]]) -> dict[str, JudgeTally]:
    """Each judge's tally (by scorer) from ``(scorer, metadata, unreadable)`` score rows."""
    judges: dict[str, JudgeTally] = {}
    for name, text, unreadable in judged:
        metadata = loads(text) or {}
        if "parse_failures" in metadata:
            judges.setdefault(name, JudgeTally()).add(metadata, unreadable or None)
    return judges


def _reasons(ids: list[str], failed: dict[int, str]) -> ReasonTally:
    tally = ReasonTally()
    seen: dict[str, Verdict] = {}
    for position in sorted(failed):
        text, sample_id = failed[position], ids[position]
        verdict = seen.get(text)
        if verdict is None:
            verdict = Verdict.from_dict(loads(text), f"sample {sample_id!r}")
            seen[text] = verdict
        for reason in verdict.reasons:
            tally.add(reason.kind, reason.key, reason.text, sample_id)
    return tally


def _slices(
    cols: SampleColumns,
    slice_by: tuple[str, ...],
    slice_key: Callable[[Mapping[str, Any], str], str],
) -> dict[str, dict[str, GroupTally]]:
    slices: dict[str, dict[str, GroupTally]] = {name: {} for name in slice_by}
    if not slice_by or cols.metadata is None:
        return slices
    rows = zip(
        cols.ids, cols.passed.tolist(), cols.weighted_score.tolist(), cols.metadata, strict=True
    )
    for sample_id, ok, score, text in rows:
        fields = {} if text is None else loads(text) or {}
        ex = ExampleNumbers(
            id=sample_id, passed=ok, weighted_score=None if score != score else score
        )
        for name in slice_by:
            slices[name].setdefault(slice_key(fields, name), GroupTally()).add(ex)
    return slices


def _epochs(ids: list[str], passed: np.ndarray, extra: list[str | None]) -> dict[str, list[bool]]:
    epochs: dict[str, list[bool]] = {}
    flags = passed.tolist()
    for position, text in enumerate(extra):
        if text is None:
            continue
        _, epoch = split_epoch(loads(text) or {})
        if epoch is not None:
            example_id = ids[position].removesuffix(f"#{epoch}")
            epochs.setdefault(example_id, []).append(flags[position])
    return epochs
