"""The numbers of a run of plain verdicts read as columns (``Store.sample_columns``).

What :class:`~aieval.report._bundle._RunTally` would count sample by sample, counted from
arrays, in the same order (so every float sum and bootstrap sees the same values: sums of floats
are ``np.bincount`` with weights, which adds in array order, as the tally does): only the failed
samples' verdicts (their reasons), judges' score metadata, the ``extra`` of a run of epochs and
each distinct metadata text a report slices by are decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from json import loads
from typing import Any

import numpy as np

from aieval.core import Verdict, split_epoch
from aieval.report._tally import ColumnTally, GroupTally, JudgeTally, ReasonTally
from aieval.store import SampleColumns, ScoreColumns, Store

__all__ = ["BulkNumbers", "bulk_numbers", "epoch_flags", "judge_tallies"]

#: distinct failed verdict texts whose reasons are kept while reading (then forgotten)
_VERDICTS_KEPT = 10_000


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
    epochs: dict[str, list[bool | None]]


def bulk_numbers(
    store: Store,
    run_id: str,
    slice_by: tuple[str, ...],
    slice_key: Callable[[Mapping[str, Any], str], str],
) -> BulkNumbers:
    """Count the run ``run_id`` (every sample a plain verdict) from its columns."""
    cols = store.sample_columns(run_id, metadata=bool(slice_by))
    scored = ~np.isnan(cols.weighted_score)
    costs = cols.cost[~np.isnan(cols.cost)]
    return BulkNumbers(
        samples=len(cols),
        passed=int(cols.passed.sum()),
        target_errors=int(cols.error.sum()),
        weighted=cols.weighted_score[scored].tolist(),
        latency=cols.latency_s[~np.isnan(cols.latency_s)].tolist(),
        cost_known=_in_order_sum(costs),  # in order, as the per-sample tally sums
        cost_priced=len(costs),
        scorers={name: _column(s) for name, s in cols.scores.items()},
        judges=judge_tallies(store.judged_scores(run_id)),
        reasons=_reasons(store, run_id),
        slices=_slices(cols, slice_by, slice_key),
        epochs=epoch_flags(store, run_id),
    )


def _in_order_sum(values: np.ndarray) -> float:
    """``0.0 + values[0] + values[1] + ...``, added in order (``bincount`` adds so)."""
    if not values.size:
        return 0.0
    return float(np.bincount(np.zeros(values.size, dtype=np.intp), weights=values)[0])


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


def _reasons(store: Store, run_id: str) -> ReasonTally:
    tally = ReasonTally()
    seen: dict[str, list[tuple[str, str, str]]] = {}

    def count(page: list[tuple[str, str | None]]) -> None:
        for sample_id, text in page:
            if text is None:
                continue
            reasons = seen.get(text)
            if reasons is None:
                if len(seen) >= _VERDICTS_KEPT:
                    seen.clear()
                verdict = Verdict.from_dict(loads(text), f"sample {sample_id!r}")
                reasons = [(r.kind, r.key, r.text) for r in verdict.reasons]
                seen[text] = reasons
            for kind, key, reason in reasons:
                tally.add(kind, key, reason, sample_id)

    store.failed_samples(run_id, count)
    return tally


def _slices(
    cols: SampleColumns,
    slice_by: tuple[str, ...],
    slice_key: Callable[[Mapping[str, Any], str], str],
) -> dict[str, dict[str, GroupTally]]:
    slices: dict[str, dict[str, GroupTally]] = {name: {} for name in slice_by}
    if not slice_by or cols.metadata_codes is None or cols.metadata_texts is None:
        return slices
    fields = [{} if text is None else loads(text) or {} for text in cols.metadata_texts]
    scored = ~np.isnan(cols.weighted_score)
    for name in slice_by:
        keys: dict[str, int] = {}
        key_of_text = np.array(
            [keys.setdefault(slice_key(f, name), len(keys)) for f in fields], dtype=np.intp
        )
        group = key_of_text[cols.metadata_codes]
        n = len(keys)
        samples = np.bincount(group, minlength=n)
        passed = np.bincount(group[cols.passed], minlength=n)
        # added in sample order per group, as GroupTally.add adds them
        weighted = np.bincount(group[scored], weights=cols.weighted_score[scored], minlength=n)
        weighted_n = np.bincount(group[scored], minlength=n)
        for key, g in keys.items():
            slices[name][key] = GroupTally(
                samples=int(samples[g]),
                passed=int(passed[g]),
                weighted_sum=float(weighted[g]) if weighted_n[g] else 0.0,
                weighted_n=int(weighted_n[g]),
            )
    return slices


def epoch_flags(store: Store, run_id: str) -> dict[str, list[bool | None]]:
    """Example id -> the pass flag of each of its answers, in a run of epochs."""
    epochs: dict[str, list[bool | None]] = {}

    def count(page: list[tuple[str, bool, str]]) -> None:
        for sample_id, passed, text in page:
            _, epoch = split_epoch(loads(text) or {})
            if epoch is not None:
                example_id = sample_id.removesuffix(f"#{epoch}")
                epochs.setdefault(example_id, []).append(passed)

    store.sample_extras(run_id, count)
    return epochs
