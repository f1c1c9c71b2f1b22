"""``compare_runs`` of two plain runs of one store from sums in the database.

When the comparison's intervals are closed form (``interval_method: auto``, at least
``bootstrap_max_n`` paired examples, and every metric over at least as many), nothing needs the
per-example values: the decision reads moments and the pass table (:class:`ScoreSums`,
:class:`PassCounts`), each metric row a paired t interval from sums or Tango's interval from its
0/1 table, the tie-break sums and two order statistics. :meth:`Store.pair_sums` and
:meth:`Store.pair_details` compute them in SQL; only the listed regressions and improvements are
read sample by sample. Runs with gates, criteria or grades (graded and workflow runs), runs of
epochs, runs in two stores and whatever ``pair_sums`` declines keep the column or record path
(:func:`sums_parts` returns ``None``); so do comparisons below ``bootstrap_max_n`` pairs, whose
bootstrap needs the values.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from aieval.grading import RunStanding
from aieval.report._bulk import judge_tallies
from aieval.report._comparable import comparison_warnings, digest, judge_shares, scorer_changes
from aieval.report._compare_rows import (
    PAIRED_T_METHOD,
    ComparedParts,
    RowInterval,
    describe_changes,
    side_row,
    tie_break_row,
)
from aieval.report._evidence import Coverage, PassCounts
from aieval.report._policy import DecisionInputs, PromotionPolicy, decide
from aieval.report._policy_inputs import ScoreSums
from aieval.report._policy_stats import score_sums_test
from aieval.report._samples import ExampleNumbers
from aieval.stats import noninferiority_from_counts, t_interval_from_moments
from aieval.store import (
    BinaryTable,
    DeltaSums,
    ListedSample,
    PairDetails,
    PairStanding,
    PairSums,
    RunRow,
    Store,
)

__all__ = ["SUMS_FROM_PAIRS", "sums_parts"]

#: Paired examples (in each run) from which a closed-form comparison is summed in the
#: database: every one (the closed forms themselves start at ``bootstrap_max_n``). Measured,
#: the sums cost no more CPU than the column path at 2 x 20k on SQLite and less from there on
#: (docs/benchmarks.md "Comparisons from sums, one pass per join"), hold no per-example array,
#: and on PostgreSQL leave the work to the server.
SUMS_FROM_PAIRS = 0


def sums_parts(
    store: Store,
    base_row: RunRow,
    cand_row: RunRow,
    policy: PromotionPolicy,
    *,
    confidence: float,
    max_examples: int | None,
) -> ComparedParts | None:
    """The comparison from sums, or ``None`` when it must read the values (module docstring)."""
    if policy.method != "auto" or policy.intervals.interval_method != "auto":
        return None
    closed = policy.intervals.closed_form
    sizes = (base_row.n_examples, cand_row.n_examples)
    if any(n is not None and n < SUMS_FROM_PAIRS for n in sizes):
        return None  # fewer pairs than that: the arrays are faster, and small enough
    if not (store.plain_run(base_row.id) and store.plain_run(cand_row.id)):
        return None
    sums = store.pair_sums(
        base_row.id, cand_row.id, example_delta=policy.example_delta, limit=max_examples
    )
    if sums is None or not closed(sums.paired) or sums.paired < SUMS_FROM_PAIRS:
        return None
    weighted = sums.weighted
    sized = [weighted.n, *(s.n for s in sums.scorers.values())]
    if any(n and not closed(n) for n in sized):
        return None  # a metric over fewer pairs draws its bootstrap from the values
    score = _score_sums(sums)
    if not score.binary and not closed(score.n):
        return None
    details = store.pair_details(base_row.id, cand_row.id, sums)
    base_judges = judge_tallies(store.judged_scores(base_row.id))
    judges = judge_tallies(store.judged_scores(cand_row.id))
    warnings = comparison_warnings(
        base_row, cand_row, {"baseline": base_judges, "candidate": judges}, policy
    )
    changed, changed_expected = _changed_texts(store, base_row.id, cand_row.id)
    passes = sums.passes
    inputs = DecisionInputs(
        coverage=Coverage(
            scored=sums.baseline_scored + sums.baseline_only[0],
            missing=details.missing,
            unscored=details.unscored,
            candidate_scored=sums.candidate_scored,
        ),
        scored_paired=sums.baseline_scored - sums.unscored,
        baseline_scores=_EMPTY,
        candidate_scores=_EMPTY,
        pass_values=PassCounts(
            sums.paired, passes.both, passes.baseline_only, passes.candidate_only
        ),
        changed_inputs=changed,
        changed_expected=changed_expected,
        scorer_changes=scorer_changes(base_row.config, cand_row.config),
        judges=judge_shares(judges),
        baseline_judges=judge_shares(base_judges),
        unpaired=sums.only_baseline + sums.only_candidate,
        warnings=warnings,
        score_sums=score,
    )
    regressions, improvements = _listed(store, base_row.id, cand_row.id, sums)
    return ComparedParts(
        paired=sums.paired,
        only_baseline=details.only_baseline,
        only_candidate=details.only_candidate,
        metrics=_metrics(sums, details, weighted, confidence, policy),
        regressions=regressions,
        improvements=improvements,
        regressions_count=sums.regressions_count,
        improvements_count=sums.improvements_count,
        tie_break=tie_break_row(
            _standing(store, base_row.id, cand_row.id, sums.standing[0], sums.only_baseline),
            _standing(store, cand_row.id, base_row.id, sums.standing[1], sums.only_candidate),
        ),
        decision=decide(inputs, policy),
    )


_EMPTY = np.empty(0)


def _score_sums(sums: PairSums) -> ScoreSums:
    """The decision's arrays as sums: the paired examples the baseline scored, then those only
    it has (the candidate's 0 there)."""
    p, (n_only, s_only, q_only) = sums.promotion, sums.baseline_only
    table = sums.promotion_table
    return ScoreSums(
        p.n + n_only,
        p.delta - s_only,
        p.delta_squares + q_only,
        table.wins if table.binary else None,
        table.losses if table.binary else None,
    )


def _metrics(
    sums: PairSums,
    details: PairDetails,
    weighted: DeltaSums,
    confidence: float,
    policy: PromotionPolicy,
) -> list[dict[str, Any]]:
    rows = [_weighted_row(weighted, details.weighted_table, policy)]
    passes = sums.passes
    rate_b = (passes.both + passes.baseline_only) / sums.paired if sums.paired else 0.0
    rate_c = (passes.both + passes.candidate_only) / sums.paired if sums.paired else 0.0
    test = noninferiority_from_counts(
        passes.candidate_only, passes.baseline_only, sums.paired,
        margin=policy.noninferiority_margin, alpha=policy.alpha, scale=100.0,
    )  # fmt: skip
    interval = RowInterval(
        test.lower_bound / 100.0, test.upper_bound / 100.0, test.method, 1.0 - policy.alpha, True
    )
    rows.append(_row("pass_rate", sums.paired, rate_b, rate_c, interval, 0, 0))
    order = sorted(details.scorers, key=lambda name: details.scorers[name].first)
    for name in order:
        found = details.scorers[name]
        pair = sums.scorers.get(name)
        missing = (found.candidate_missing, found.baseline_missing)
        if pair is None or not pair.n:
            rows.append(_row(name, 0, None, None, None, *missing))
            continue
        interval = _closed_interval(pair, found.table, confidence)
        rows.append(
            _row(name, pair.n, pair.baseline / pair.n, pair.candidate / pair.n, interval, *missing)
        )
    return rows


def _weighted_row(sums: DeltaSums, table: BinaryTable, policy: PromotionPolicy) -> dict[str, Any]:
    if not sums.n:
        return _row("weighted_score", 0, None, None, None, 0, 0)
    score = ScoreSums(
        sums.n, sums.delta, sums.delta_squares,
        table.wins if table.binary else None, table.losses if table.binary else None,
    )  # fmt: skip
    test = score_sums_test(score, policy)
    interval = RowInterval(
        test.lower_bound, test.upper_bound, test.method, 1.0 - policy.alpha, True
    )
    return _row(
        "weighted_score", sums.n, sums.baseline / sums.n, sums.candidate / sums.n, interval, 0, 0
    )


def _closed_interval(pair: DeltaSums, table: BinaryTable, confidence: float) -> RowInterval:
    """``_compare_rows._closed_interval`` from sums: Tango's interval of a 0/1 metric, else the
    paired t interval."""
    if table.binary:
        tail = (1.0 - confidence) / 2.0
        test = noninferiority_from_counts(table.wins, table.losses, pair.n, margin=0.0, alpha=tail)
        return RowInterval(test.lower_bound, test.upper_bound, test.method, confidence, False)
    mean = pair.delta / pair.n
    var = max(pair.delta_squares - pair.delta * mean, 0.0) / (pair.n - 1) if pair.n > 1 else 0.0
    ci = t_interval_from_moments(pair.n, mean, math.sqrt(var), confidence=confidence)
    return RowInterval(ci.low, ci.high, PAIRED_T_METHOD, confidence, False)


def _row(
    name: str,
    n: int,
    baseline: float | None,
    candidate: float | None,
    interval: RowInterval | None,
    candidate_missing: int,
    baseline_missing: int,
) -> dict[str, Any]:
    missing = {"candidate_missing": candidate_missing, "baseline_missing": baseline_missing}
    if interval is None or baseline is None or candidate is None:
        return {
            "name": name, "baseline": None, "candidate": None, "delta": None, "low": None,
            "high": None, "method": None, "n": 0, **missing,
        }  # fmt: skip
    return {
        "name": name,
        "baseline": baseline,
        "candidate": candidate,
        "delta": candidate - baseline,
        **interval.to_dict(),
        "n": n,
        **missing,
    }


def _changed_texts(store: Store, baseline: str, candidate: str) -> tuple[list[str], list[str]]:
    """The paired examples whose input, and whose expected answer, differ: compared as texts by
    the database, then as values (a text that differs only in spelling is no change)."""
    changed: list[str] = []
    changed_expected: list[str] = []
    for pair in store.changed_texts(baseline, candidate):
        if _differ(*pair.inputs):
            changed.append(pair.sample_id)
        if _differ(*pair.expected):
            changed_expected.append(pair.sample_id)
    return changed, changed_expected


def _differ(old: Any, new: Any) -> bool:
    def dig(text: Any) -> bytes:
        return digest(None if text is None else json.loads(text))

    return bool(dig(old) != dig(new))


def _listed(
    store: Store, baseline: str, candidate: str, sums: PairSums
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The listed regressions and improvements, read sample by sample (only those)."""
    ids = [*sums.regressions, *sums.improvements]
    base = store.listed_samples(baseline, ids)
    cand = store.listed_samples(candidate, ids)

    def entry(sample_id: str) -> dict[str, Any]:
        b, c = _numbers(sample_id, base[sample_id]), _numbers(sample_id, cand[sample_id])
        known = b.weighted_score is not None and c.weighted_score is not None
        return {
            "id": sample_id,
            "baseline": side_row(b),
            "candidate": side_row(c),
            "delta": c.weighted_score - b.weighted_score  # type: ignore[operator]
            if known
            else None,
            "changes": describe_changes(b, c),
        }

    return [entry(i) for i in sums.regressions], [entry(i) for i in sums.improvements]


def _numbers(sample_id: str, sample: ListedSample) -> ExampleNumbers:
    return ExampleNumbers(
        id=sample_id,
        passed=sample.passed,
        weighted_score=sample.weighted_score,
        error=sample.error,
    )


def _standing(
    store: Store, run_id: str, other: str, standing: PairStanding, unpaired: int
) -> RunStanding | None:
    """``_compare._standing`` of a plain run's paired examples, from sums and two order
    statistics of its latencies (``numpy.quantile``'s linear interpolation); ``unpaired``: its
    examples ``other`` lacks."""
    if not standing.scored:
        return None
    p95 = None
    if standing.latencies:
        h = (standing.latencies - 1) * 0.95
        low = math.floor(h)
        values = store.pair_latencies(
            run_id, other, low, 2, total=standing.latencies, all_paired=not unpaired
        )
        p95 = values[0] if len(values) < 2 else values[0] + (h - low) * (values[1] - values[0])
    return RunStanding(
        weighted_score=standing.total / standing.scored,
        gate_failures=0,
        correctness=None,
        safety=None,
        p95_latency=p95,
        cost=standing.cost if standing.costed and not standing.unpriced else None,
    )
