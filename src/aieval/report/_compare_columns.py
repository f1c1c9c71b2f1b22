"""``compare_runs`` of two runs of plain verdicts, from columns.

What the record path (``_compare._record_parts``) computes example by example, computed on
arrays, in the same order and with the same float operations (so every sum, mean and bootstrap
sees the same values): each run's samples and scores are read in bulk
(:class:`~aieval.store._pair_reads.PairReader`), paired by example id through one dict, and
merged over epochs column by column. Per-example objects are built only where a rule needs one:
the regressions and improvements listed, and the examples whose weighted score leaves out a
scorer one side lacks. Inputs and expected answers are compared as stored texts (by the database
when both runs are in one store); the few that differ as text are decoded and digested as the
record path does, so a text that differs only in spelling (key order, say) is not a change.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from aieval._gc import no_collection
from aieval.core import ROW_CHECK_PREFIX
from aieval.grading import RunStanding
from aieval.report._bulk import judge_tallies
from aieval.report._comparable import comparison_warnings, digest, judge_shares, scorer_changes
from aieval.report._compare_rows import (
    ComparedParts,
    MetricValues,
    added_warning,
    describe_changes,
    metric_rows,
    side_row,
    tie_break_row,
    uneven_warning,
    without_scorers,
)
from aieval.report._evidence import Coverage, PassValues
from aieval.report._policy import DecisionInputs, PromotionPolicy, decide
from aieval.report._samples import ExampleNumbers
from aieval.report._tally import JudgeTally
from aieval.store import KeptColumns, KeptIds, PairSamples, PairScores, RunRow, Store

__all__ = ["column_parts"]


@dataclass(slots=True)
class _Side:
    """One run's examples, in order of first appearance, as arrays (``NaN``: none).

    ``present[k, e]``/``values[k, e]``: whether example ``e`` has a score of ``names[k]`` and its
    value (the mean over its epochs); ``first_row[k, e]`` orders an example's scorers as its
    samples list them. ``single[e]``: the example has one sample, whose numbers it keeps. A run
    without epochs (each sample its own example) holds no per-example copies: its first and
    last samples are a ``range``, ``single`` is one value broadcast, its figures are its
    samples' own arrays.
    """

    store: Store
    run_id: str
    keys: Sequence[str]
    sample_ids: Sequence[str]
    first_sample: np.ndarray | range
    last_sample: np.ndarray | range
    single: np.ndarray
    passed: np.ndarray
    shares: np.ndarray | None
    weighted: np.ndarray
    latency: np.ndarray
    cost: np.ndarray
    unpriced: np.ndarray
    errors: dict[int, str]
    names: list[str]
    present: np.ndarray
    values: np.ndarray
    first_row: np.ndarray
    judges: dict[str, JudgeTally]
    epochs: bool

    def ident(self, e: int) -> str:
        """The id of example ``e``'s numbers: its sample's id when it has one sample."""
        return self.sample_ids[int(self.first_sample[e])] if self.single[e] else self.keys[e]

    def pass_value(self) -> np.ndarray:
        """Each example's pass value: the share of its epochs that passed (``shares``), or
        its pass flag as a number (made on demand: a million examples, 8 MB)."""
        return self.passed.astype(float) if self.shares is None else self.shares

    def release_figures(self) -> None:
        """Drop the latency and cost arrays (once the tie-break is drawn): :meth:`numbers`
        reads them, so it fails loudly after this, never with other examples' figures."""
        self.latency = self.cost = _RELEASED

    def row(self, name: str) -> int | None:
        """The index of scorer ``name`` in :attr:`names`, ``None`` when the run has none."""
        try:
            return self.names.index(name)
        except ValueError:
            return None

    def scores(self, e: int) -> dict[str, float | None]:
        """Example ``e``'s scores by name, in the order its samples list them."""
        ks = sorted(np.flatnonzero(self.present[:, e]).tolist(), key=lambda k: self.first_row[k, e])
        return {self.names[k]: _opt(self.values[k, e]) for k in ks}

    def numbers(self, e: int, weights: dict[str, float] | None = None) -> ExampleNumbers:
        """Example ``e`` as the record path's :class:`ExampleNumbers` (no gates or criteria:
        a plain verdict has none)."""
        return ExampleNumbers(
            id=self.ident(e),
            passed=bool(self.passed[e]),
            weighted_score=_opt(self.weighted[e]),
            scores=self.scores(e),
            error=self.errors.get(e),
            latency_s=_opt(self.latency[e]),
            cost=_opt(self.cost[e]),
            unpriced=bool(self.unpriced[e]),
            weights=(weights or {}) if self.single[e] else {},
            pass_share=None if self.single[e] else float(self.pass_value()[e]),
        )


#: a side's latency and cost once released (:meth:`_Side.release_figures`)
_RELEASED = np.empty(0)
_RELEASED.flags.writeable = False


@dataclass(frozen=True, slots=True)
class _Pairs:
    """The examples both runs have: each side's example index per pair (``pb``, ``pc``) and
    its weighted score (``wb``, ``wc``; nan: none)."""

    base: _Side
    cand: _Side
    pb: np.ndarray
    pc: np.ndarray
    wb: np.ndarray
    wc: np.ndarray


# no cyclic garbage collection while the arrays and id maps are built (see no_collection)
@no_collection()
def column_parts(
    base_store: Store,
    base_row: RunRow,
    store: Store,
    cand_row: RunRow,
    policy: PromotionPolicy,
    *,
    confidence: float,
    n_resamples: int,
    seed: int | None,
    max_examples: int | None,
) -> ComparedParts:
    """The comparison of two runs whose every sample has a plain verdict, from columns."""
    base = _read_side(base_store, base_row.id)
    cand = _read_side(store, cand_row.id)
    pb, pc = _pair(base, cand)
    changed, changed_expected = _changed_texts(base, cand, base_store is store, pb, pc)
    return _parts(
        base, cand, pb, pc, changed, changed_expected, base_row, cand_row, policy,
        confidence=confidence, n_resamples=n_resamples, seed=seed, max_examples=max_examples,
    )  # fmt: skip


@no_collection()
def kept_parts(
    base_store: Store,
    base_row: RunRow,
    store: Store,
    cand_row: RunRow,
    policy: PromotionPolicy,
    *,
    confidence: float,
    n_resamples: int,
    seed: int | None,
    max_examples: int | None,
) -> ComparedParts | None:
    """:func:`column_parts` from the columns both runs kept as they were written
    (``Store.kept_columns``); ``None`` when either has none that cover it. Two runs of one
    dataset pair by position (their ids equal, in order), others by id."""
    sides: list[tuple[_Side, _Digests]] = []
    for side_store, row in ((base_store, base_row), (store, cand_row)):
        kept = side_store.kept_columns(row.id)
        if kept is None:
            return None
        sides.append(
            (
                _kept_side(side_store, row.id, kept),
                _Digests(kept.ids, kept.texts_hash),
            )
        )
        del kept  # only the side and the digests are kept: memory of one run's copy at a time
    (base, digests_b), (cand, digests_c) = sides
    if digests_b.ids.same(digests_c.ids):
        n = len(digests_b.ids)  # 32-bit indices where they fit: half the memory
        pb = pc = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    else:
        pb, pc = _pair(base, cand)
    changed, changed_expected = _kept_changed_texts(base, cand, digests_b, digests_c, pb, pc)
    del sides, digests_b, digests_c  # not needed by the rest: 32 MB at a million pairs
    return _parts(
        base, cand, pb, pc, changed, changed_expected, base_row, cand_row, policy,
        confidence=confidence, n_resamples=n_resamples, seed=seed, max_examples=max_examples,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Digests:
    """A run's sample ids, and the digests of their input and expected answer together
    (``KeptColumns.texts_hash``), in dataset order."""

    ids: KeptIds
    texts: np.ndarray


def _pair(base: _Side, cand: _Side) -> tuple[np.ndarray, np.ndarray]:
    """Each side's example index of the examples both have (by id), in the baseline's order."""
    index = {key: e for e, key in enumerate(cand.keys)}
    pair_b = [e for e, key in enumerate(base.keys) if key in index]
    pair_c = [index[base.keys[e]] for e in pair_b]
    return np.array(pair_b, dtype=np.int64), np.array(pair_c, dtype=np.int64)


def _parts(
    base: _Side,
    cand: _Side,
    pb: np.ndarray,
    pc: np.ndarray,
    changed: list[str],
    changed_expected: list[str],
    base_row: RunRow,
    cand_row: RunRow,
    policy: PromotionPolicy,
    *,
    confidence: float,
    n_resamples: int,
    seed: int | None,
    max_examples: int | None,
) -> ComparedParts:
    paired_c = np.zeros(len(cand.keys), dtype=bool)
    paired_c[pc] = True
    paired_b = np.zeros(len(base.keys), dtype=bool)
    paired_b[pb] = True
    only_b = np.flatnonzero(~paired_b)
    warnings = comparison_warnings(
        base_row, cand_row, {"baseline": base.judges, "candidate": cand.judges}, policy
    )
    added = set(cand.names) - set(base.names)
    wc_all = cand.weighted
    if added:
        warnings.append(added_warning(added))
        wc_all = wc_all.copy()
        _leave_out(cand, wc_all, added)
    # the sides' own arrays where every example pairs in order (read only: copied if changed)
    pairs = _Pairs(base, cand, pb, pc, _at(base.weighted, pb), _at(wc_all, pc))
    pairs, uneven = _shared_row_checks(pairs, wc_all, added)
    if uneven:
        warnings.append(uneven_warning(uneven))
    del wc_all
    tie_break = tie_break_row(
        _standing(pairs.wb, _at(base.latency, pb), _at(base.cost, pb), _at(base.unpriced, pb)),
        _standing(pairs.wc, _at(cand.latency, pc), _at(cand.cost, pc), _at(cand.unpriced, pc)),
    )
    # the rest reads neither side's latency or cost: released (a million examples, 32 MB)
    base.release_figures()
    cand.release_figures()
    # the inputs are released once decided (their score arrays: 16 MB at a million pairs)
    decision = decide(
        _inputs(
            pairs, only_b,
            unpaired=len(only_b) + int(np.count_nonzero(~paired_c)),
            warnings=warnings, changed=changed, changed_expected=changed_expected,
            scorer_changes=scorer_changes(base_row.config, cand_row.config),
        ),
        policy,
    )  # fmt: skip
    regressions, improvements, counts = _changes(pairs, policy.example_delta, max_examples)
    return ComparedParts(
        paired=len(pb),
        only_baseline=[base.keys[e] for e in only_b.tolist()],
        only_candidate=[cand.keys[e] for e in np.flatnonzero(~paired_c).tolist()],
        metrics=_metrics(pairs, confidence, n_resamples, seed, policy),
        regressions=regressions,
        improvements=improvements,
        regressions_count=counts[0],
        improvements_count=counts[1],
        tie_break=tie_break,
        decision=decision,
    )


def _read_side(store: Store, run_id: str) -> _Side:
    samples = store.pair_samples(run_id)
    positions = {sample_id: p for p, sample_id in enumerate(samples.ids)}
    scores = store.pair_scores(run_id, positions)
    return _side(store, run_id, samples, scores, store.judged_scores(run_id))


def _kept_side(store: Store, run_id: str, kept: KeptColumns) -> _Side:
    """A run's side from its kept columns (a run without epochs: :func:`_plain_side` of its
    arrays, no copy); the judges' scores are scanned only when some score's metadata may name
    them."""
    n = len(kept.ids)
    return _Side(
        store=store,
        run_id=run_id,
        keys=kept.ids,
        sample_ids=kept.ids,
        first_sample=range(n),
        last_sample=range(n),
        single=np.broadcast_to(np.True_, (n,)),
        passed=kept.passed,
        shares=None,
        weighted=kept.weighted,
        latency=kept.latency,
        cost=kept.cost,
        unpriced=kept.unpriced,
        errors=kept.errors,
        names=kept.names,
        present=kept.present,
        values=kept.values,
        first_row=kept.rank,
        judges=judge_tallies(store.judged_scores(run_id) if kept.judged else []),
        epochs=False,
    )


def _side(
    store: Store,
    run_id: str,
    samples: PairSamples,
    scores: PairScores,
    judged: list[tuple[str, str, str | None]],
) -> _Side:
    if not samples.epochs:
        return _plain_side(store, run_id, samples, scores, judged)
    n = len(samples.ids)
    found: dict[str, int] = {}
    example = np.array(
        [
            found.setdefault(
                sid.removesuffix(f"#{samples.epochs[p]}") if p in samples.epochs else sid,
                len(found),
            )
            for p, sid in enumerate(samples.ids)
        ],
        dtype=np.int64,
    )
    keys = list(found)
    m = len(keys)
    order = np.argsort(example, kind="stable")
    counts = np.bincount(example, minlength=m)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if m else np.empty(0, dtype=np.int64)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - np.repeat(starts, counts)
    single = counts == 1
    first_sample = order[starts] if m else np.empty(0, dtype=np.int64)
    last_sample = order[starts + counts - 1] if m else np.empty(0, dtype=np.int64)
    width = int(counts.max()) if m else 1

    def merged(x: np.ndarray) -> np.ndarray:
        out = x[first_sample] if m else np.empty(0)
        if width > 1:
            out = np.where(single, out, _epoch_means(x, example, rank, m, width))
        return out

    passed = samples.passed[first_sample] if m else np.empty(0, dtype=bool)
    pass_value = passed.astype(float)
    if width > 1:
        share = _epoch_means(samples.passed.astype(float), example, rank, m, width)
        pass_value = np.where(single, pass_value, share)
        passed = np.where(single, passed, share >= 0.5)
    errors = _merged_errors(samples.errors, example, counts, first_sample)
    k = len(scores.names)
    present = np.zeros((k, m), dtype=bool)
    values = np.full((k, m), np.nan)
    # 32-bit row numbers where they fit: only their order within an example is read
    kind = np.int32 if len(scores.code) < 2**31 else np.int64
    first_row = np.full((k, m), len(scores.code), dtype=kind)
    rows = np.arange(len(scores.code), dtype=kind)
    for c in range(k):
        mask = scores.code == c
        where = scores.position[mask]
        ex = example[where]
        present[c, ex] = True
        if width > 1:
            seen, first = np.unique(ex, return_index=True)
            first_row[c, seen] = rows[mask][first]
        else:  # one sample per example, one row per sample and scorer: each row is the first
            first_row[c, ex] = rows[mask]
        column = np.full(n, np.nan)
        column[where] = scores.value[mask]
        values[c] = merged(column)
    return _Side(
        store=store,
        run_id=run_id,
        keys=keys,
        sample_ids=samples.ids,
        first_sample=first_sample,
        last_sample=last_sample,
        single=single,
        passed=passed,
        shares=pass_value,
        weighted=merged(samples.weighted_score),
        latency=merged(samples.latency_s),
        cost=merged(samples.cost),
        # an example of epochs is unpriced when any of its answers is (their mean is above 0)
        unpriced=merged(samples.unpriced.astype(float)) > 0,
        errors=errors,
        names=scores.names,
        present=present,
        values=values,
        first_row=first_row,
        judges=judge_tallies(judged),
        epochs=True,
    )


def _plain_side(
    store: Store,
    run_id: str,
    samples: PairSamples,
    scores: PairScores,
    judged: list[tuple[str, str, str | None]],
) -> _Side:
    """:func:`_side` of a run without epochs: each sample is its own example, in order, so
    the samples' arrays are the examples' (no copy) and each score row is its example's."""
    n = len(samples.ids)
    k = len(scores.names)
    present = np.zeros((k, n), dtype=bool)
    values = np.full((k, n), np.nan)
    # 32-bit row numbers where they fit: only their order within an example is read
    kind = np.int32 if len(scores.code) < 2**31 else np.int64
    first_row = np.full((k, n), len(scores.code), dtype=kind)
    for c in range(k):
        rows = np.flatnonzero(scores.code == c)
        where = scores.position[rows]
        present[c, where] = True
        first_row[c, where] = rows
        values[c, where] = scores.value[rows]
    return _Side(
        store=store,
        run_id=run_id,
        keys=samples.ids,
        sample_ids=samples.ids,
        first_sample=range(n),
        last_sample=range(n),
        single=np.broadcast_to(np.True_, (n,)),
        passed=samples.passed,
        shares=None,
        weighted=samples.weighted_score,
        latency=samples.latency_s,
        cost=samples.cost,
        unpriced=samples.unpriced.astype(bool, copy=False),
        errors=dict(samples.errors),
        names=scores.names,
        present=present,
        values=values,
        first_row=first_row,
        judges=judge_tallies(judged),
        epochs=False,
    )


def _epoch_means(
    x: np.ndarray, example: np.ndarray, rank: np.ndarray, m: int, width: int
) -> np.ndarray:
    """Per example, the mean of its samples' known values of ``x`` (``NaN``: none), summed
    one epoch after the other as ``merge_epochs`` sums them."""
    grid = np.full((m, width), np.nan)
    grid[example, rank] = x
    total = np.zeros(m)
    count = np.zeros(m, dtype=np.int64)
    for r in range(width):
        column = grid[:, r]
        known = ~np.isnan(column)
        total = np.where(known, total + np.where(known, column, 0.0), total)
        count += known
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _merged_errors(
    errors: dict[int, str], example: np.ndarray, counts: np.ndarray, first_sample: np.ndarray
) -> dict[int, str]:
    """Each example's target error: its sample's, or over epochs the first one's when every
    epoch failed (``merge_epochs``)."""
    out: dict[int, str] = {}
    failed: dict[int, int] = {}
    for position, text in errors.items():
        e = int(example[position])
        if counts[e] == 1:
            out[e] = text
        elif text:
            failed[e] = failed.get(e, 0) + 1
    for e, n in failed.items():
        if n == counts[e]:
            out[e] = errors[int(first_sample[e])]
    return out


def _weights(side: _Side, examples: list[int]) -> dict[int, dict[str, float]]:
    """The stored scorer weights of the single-sample ``examples`` that have any."""
    ids = {side.sample_ids[int(side.first_sample[e])]: e for e in examples if side.single[e]}
    found = side.store.sample_weights(side.run_id, list(ids))
    return {ids[sample_id]: weights for sample_id, weights in found.items()}


def _leave_out(cand: _Side, weighted: np.ndarray, added: set[str]) -> None:
    """``weighted`` (the candidate's) recomputed without the ``added`` scorers where an
    example has one."""
    rows = [k for k, name in enumerate(cand.names) if name in added]
    touched = np.flatnonzero(cand.present[rows].any(axis=0)).tolist()
    weights = _weights(cand, touched)
    for e in touched:
        ex = without_scorers(cand.numbers(e, weights.get(e)), added)
        weighted[e] = _nan(ex.weighted_score)


def _shared_row_checks(pairs: _Pairs, wc_all: np.ndarray, added: set[str]) -> tuple[_Pairs, int]:
    """``_compare._shared_row_checks`` on the paired scores ``wb``/``wc``: the pairs with the
    scores it changed (copies), and how many pairs it changed."""
    base, cand, pb, pc, wb, wc = pairs.base, pairs.cand, pairs.pb, pairs.pc, pairs.wb, pairs.wc
    rows_b = _row_checks(base, pb)
    rows_c = _row_checks(cand, pc)
    if not rows_b and not rows_c:
        return pairs, 0
    uneven = [
        p
        for p in sorted(set(rows_b) | set(rows_c))
        if rows_b.get(p, frozenset()) != rows_c.get(p, frozenset())
        and not base.errors.get(int(pb[p]))
        and not cand.errors.get(int(pc[p]))
    ]
    if not uneven:
        return pairs, 0
    weights_b = _weights(base, [int(pb[p]) for p in uneven])
    weights_c = _weights(cand, [int(pc[p]) for p in uneven])
    wb, wc = wb.copy(), wc.copy()  # they may be the sides' own arrays
    for p in uneven:
        eb, ec = int(pb[p]), int(pc[p])
        b_rows, c_rows = rows_b.get(p, frozenset()), rows_c.get(p, frozenset())
        b = without_scorers(base.numbers(eb, weights_b.get(eb)), set(b_rows - c_rows))
        c = replace(cand.numbers(ec, weights_c.get(ec)), weighted_score=_opt(wc_all[ec]))
        c = without_scorers(c, set(c_rows - b_rows) | added)
        wb[p], wc[p] = _nan(b.weighted_score), _nan(c.weighted_score)
    return replace(pairs, wb=wb, wc=wc), len(uneven)


def _row_checks(side: _Side, examples: np.ndarray) -> dict[int, frozenset[str]]:
    """The rows' own checks of each paired example (by pair) that has any."""
    rows = [k for k, name in enumerate(side.names) if name.startswith(ROW_CHECK_PREFIX)]
    if not rows:
        return {}
    has = side.present[rows][:, examples]
    out = {}
    for p in np.flatnonzero(has.any(axis=0)).tolist():
        out[p] = frozenset(side.names[rows[i]] for i in np.flatnonzero(has[:, p]).tolist())
    return out


def _changed_texts(
    base: _Side, cand: _Side, one_store: bool, pb: np.ndarray, pc: np.ndarray
) -> tuple[list[str], list[str]]:
    """The paired examples whose input, and whose expected answer, differ (candidate order):
    the baseline's last sample of the example against the candidate's first, as the record
    path compares them."""
    changed: list[str] = []
    changed_expected: list[str] = []
    if one_store and not base.epochs and not cand.epochs:
        # one sample per example, example id = sample id: the database compares the texts
        for pair in cand.store.changed_texts(base.run_id, cand.run_id):
            if _differ(*pair.inputs):
                changed.append(pair.sample_id)
            if _differ(*pair.expected):
                changed_expected.append(pair.sample_id)
        return changed, changed_expected
    base_inputs, base_expected = base.store.sample_texts(base.run_id)
    cand_inputs, cand_expected = cand.store.sample_texts(cand.run_id)
    partner = np.full(len(cand.keys), -1, dtype=np.int64)
    partner[pc] = pb
    for e in np.flatnonzero(partner >= 0).tolist():
        b, c = int(base.last_sample[partner[e]]), int(cand.first_sample[e])
        if base_inputs[b] != cand_inputs[c] and _differ(base_inputs[b], cand_inputs[c]):
            changed.append(cand.keys[e])
        if base_expected[b] != cand_expected[c] and _differ(base_expected[b], cand_expected[c]):
            changed_expected.append(cand.keys[e])
    return changed, changed_expected


def _kept_changed_texts(
    base: _Side,
    cand: _Side,
    digests_b: _Digests,
    digests_c: _Digests,
    pb: np.ndarray,
    pc: np.ndarray,
) -> tuple[list[str], list[str]]:
    """:func:`_changed_texts` from the texts' digests: only the pairs whose stored input or
    expected answer differ are read back (in the candidate's order), and decoded as the record
    path does."""
    found = np.flatnonzero(_at(digests_b.texts, pb) != _at(digests_c.texts, pc))
    if not found.size:
        return [], []
    found = found[np.argsort(pc[found], kind="stable")]
    ids = [cand.keys[int(pc[p])] for p in found.tolist()]
    texts_b = base.store.sample_text_pairs(base.run_id, ids)
    texts_c = cand.store.sample_text_pairs(cand.run_id, ids)
    changed: list[str] = []
    changed_expected: list[str] = []
    for sample_id in ids:
        (in_b, ex_b), (in_c, ex_c) = texts_b[sample_id], texts_c[sample_id]
        if in_b != in_c and _differ(in_b, in_c):
            changed.append(sample_id)
        if ex_b != ex_c and _differ(ex_b, ex_c):
            changed_expected.append(sample_id)
    return changed, changed_expected


def _differ(old: Any, new: Any) -> bool:
    """Whether two stored JSON texts hold values of different digests."""
    return bool(_digest(old) != _digest(new))


def _digest(text: Any) -> bytes:
    return digest(None if text is None else json.loads(text))


def _inputs(
    pairs: _Pairs,
    only_b: np.ndarray,
    *,
    unpaired: int,
    warnings: list[str],
    changed: list[str],
    changed_expected: list[str],
    scorer_changes: list[str],
) -> DecisionInputs:
    """``example_inputs`` on the paired arrays: a plain verdict has no gates, criteria or
    grade, so there are no graded pairs and no grading that differs."""
    base, cand, pb, pc, wb, wc = pairs.base, pairs.cand, pairs.pb, pairs.pc, pairs.wb, pairs.wc
    b_known, c_known = ~np.isnan(wb), ~np.isnan(wc)
    failed = np.zeros(len(cand.keys), dtype=bool)
    failed[list(cand.errors)] = True
    c_failed = _at(failed, pc)
    lacks = np.zeros(len(pb), dtype=bool)
    for k, name in enumerate(base.names):
        b_val = ~np.isnan(_at(base.values[k], pb))
        kc = cand.row(name)
        c_val = np.zeros(len(pc), dtype=bool) if kc is None else ~np.isnan(_at(cand.values[kc], pc))
        lacks |= b_val & ~c_val
    unscored = b_known & (~c_known | (~c_failed & lacks))
    only_scored = ~np.isnan(base.weighted[only_b])
    passed_b, passed_c = _at(base.passed, pb), _at(cand.passed, pc)
    if bool(b_known.all()) and not only_scored.any() and not unscored.any():
        scores = (wb, wc)  # every pair scored on both sides: the arrays as they are (read only)
    else:
        scores = (
            np.concatenate((wb[b_known], base.weighted[only_b][only_scored])),
            np.concatenate(
                (
                    np.where(unscored, 0.0, wc)[b_known],
                    np.zeros(int(np.count_nonzero(only_scored))),
                )
            ),
        )
    return DecisionInputs(
        coverage=Coverage(
            scored=int(np.count_nonzero(b_known)) + int(np.count_nonzero(only_scored)),
            missing=[base.ident(e) for e in only_b[only_scored].tolist()],
            unscored=[base.ident(e) for e in pb[unscored].tolist()],
            candidate_scored=int(np.count_nonzero(c_known)),
        ),
        scored_paired=int(np.count_nonzero(b_known & ~unscored)),
        baseline_scores=scores[0],
        candidate_scores=scores[1],
        pass_values=PassValues(
            _at(base.pass_value(), pb),
            _at(cand.pass_value(), pc),
            lost=int(np.count_nonzero(passed_b & ~passed_c)),
            gained=int(np.count_nonzero(passed_c & ~passed_b)),
            shares=bool((~base.single[pb]).any() or (~cand.single[pc]).any()),
        ),
        changed_inputs=changed,
        changed_expected=changed_expected,
        scorer_changes=scorer_changes,
        judges=judge_shares(cand.judges),
        baseline_judges=judge_shares(base.judges),
        unpaired=unpaired,
        warnings=warnings,
    )


def _changes(
    pairs: _Pairs, example_delta: float, max_examples: int | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], tuple[int, int]]:
    """``_compare._changes`` on arrays: the regressions and improvements listed (up to
    ``max_examples``), and how many there are."""
    base, cand, pb, pc, wb, wc = pairs.base, pairs.cand, pairs.pb, pairs.pc, pairs.wb, pairs.wc
    # -1, 0 or 1: 8 bits (a million pairs: 1 MB a copy)
    flip = _at(cand.passed, pc).astype(np.int8) - _at(base.passed, pb).astype(np.int8)
    known = ~np.isnan(wb) & ~np.isnan(wc)
    delta = np.where(known, wc - wb, np.nan)
    key = np.where(known, delta, 0.0)
    with np.errstate(invalid="ignore"):
        worse = (flip < 0) | (known & (delta <= -example_delta))
        better = (flip > 0) | (known & (delta >= example_delta))
    regressed = np.flatnonzero(worse)
    improved = np.flatnonzero(better & ~worse)
    regressed = regressed[np.lexsort((regressed, key[regressed], flip[regressed]))]
    improved = improved[np.lexsort((improved, -key[improved], -flip[improved]))]
    if max_examples is not None:
        shown_r, shown_i = regressed[:max_examples], improved[:max_examples]
    else:
        shown_r, shown_i = regressed, improved

    def entry(p: int) -> dict[str, Any]:
        b = _listed(base, int(pb[p]), wb[p])
        c = _listed(cand, int(pc[p]), wc[p])
        return {
            "id": b.id,
            "baseline": side_row(b),
            "candidate": side_row(c),
            "delta": float(delta[p]) if known[p] else None,
            "changes": describe_changes(b, c),
        }

    return (
        [entry(p) for p in shown_r.tolist()],
        [entry(p) for p in shown_i.tolist()],
        (len(regressed), len(improved)),
    )


def _listed(side: _Side, e: int, weighted: float) -> ExampleNumbers:
    """Example ``e`` as a listed change shows it (its weighted score as compared)."""
    return ExampleNumbers(
        id=side.ident(e),
        passed=bool(side.passed[e]),
        weighted_score=_opt(weighted),
        error=side.errors.get(e),
        pass_share=None if side.single[e] else float(side.pass_value()[e]),
    )


def _metrics(
    pairs: _Pairs, confidence: float, n_resamples: int, seed: int | None, policy: PromotionPolicy
) -> list[dict[str, Any]]:
    base, cand, pb, pc, wb, wc = pairs.base, pairs.cand, pairs.pb, pairs.pc, pairs.wb, pairs.wc
    columns = [
        ("weighted_score", wb, wc),
        ("pass_rate", _at(base.pass_value(), pb), _at(cand.pass_value(), pc)),
    ]
    for name in _scorer_order(base, cand, pb, pc):
        columns.append((name, _values(base, name, pb), _values(cand, name, pc)))
    metrics: list[MetricValues] = []
    for name, vb, vc in columns:
        has_b, has_c = ~np.isnan(vb), ~np.isnan(vc)
        both = has_b & has_c
        missing = {
            "candidate_missing": int(np.count_nonzero(has_b & ~has_c)),
            "baseline_missing": int(np.count_nonzero(~has_b & has_c)),
        }
        if (
            both.size and both.all()
        ):  # the same values without a copy (a million pairs: 16 MB a metric)
            metrics.append((name, vb, vc, missing))
        elif both.any():
            metrics.append((name, vb[both], vc[both], missing))
        else:
            metrics.append((name, None, None, missing))
    shares = bool((~base.single[pb]).any() or (~cand.single[pc]).any())
    return metric_rows(metrics, confidence, n_resamples, seed, policy=policy, pass_shares=shares)


def _values(side: _Side, name: str, examples: np.ndarray) -> np.ndarray:
    k = side.row(name)
    if k is None:
        return np.full(len(examples), np.nan)
    return _at(side.values[k], examples)


def _at(values: np.ndarray, examples: np.ndarray) -> np.ndarray:
    """``values[examples]``; ``values`` itself (not a copy) when ``examples`` is every example
    in order, as in two runs of one dataset (read only)."""
    n = len(values)
    if len(examples) == n and (
        # n indices below n, strictly increasing from 0: each in order (a bool array's test)
        not n or (examples[0] == 0 and bool(np.all(examples[1:] > examples[:-1])))
    ):
        return values
    out: np.ndarray = values[examples]
    return out


def _scorer_order(base: _Side, cand: _Side, pb: np.ndarray, pc: np.ndarray) -> list[str]:
    """The scorers of the paired examples in the order the record path meets them: pair by
    pair, the baseline's before the candidate's, each as its samples list them."""
    keys: dict[str, tuple[int, int, int]] = {}
    for side_no, (side, examples) in enumerate(((base, pb), (cand, pc))):
        for k, name in enumerate(side.names):
            found = np.flatnonzero(side.present[k, examples])
            if found.size:
                p = int(found[0])
                key = (p, side_no, int(side.first_row[k, int(examples[p])]))
                if name not in keys or key < keys[name]:
                    keys[name] = key
    return sorted(keys, key=keys.__getitem__)


def _standing(
    weighted: np.ndarray, latency: np.ndarray, cost: np.ndarray, unpriced: np.ndarray
) -> RunStanding | None:
    """``_compare._standing`` of examples without gates or criteria (one figure's known
    values at a time: a million examples, 8 MB each)."""
    scores = _known(weighted)
    if not scores.size:
        return None
    mean = float(np.mean(scores))
    del scores
    latencies = _known(latency)
    p95 = float(np.quantile(latencies, 0.95)) if latencies.size else None
    del latencies
    costs = _known(cost).tolist()
    return RunStanding(
        weighted_score=mean,
        gate_failures=0,
        correctness=None,
        safety=None,
        p95_latency=p95,
        cost=float(sum(costs)) if costs and not unpriced.any() else None,
    )


def _known(values: np.ndarray) -> np.ndarray:
    """``values`` without its ``NaN``; ``values`` itself (read only) when it has none."""
    known = ~np.isnan(values)
    return values if bool(known.all()) else values[known]


def _opt(value: Any) -> float | None:
    """A float, ``None`` for ``NaN``."""
    number = float(value)
    return None if number != number else number


def _nan(value: float | None) -> float:
    return np.nan if value is None else value
