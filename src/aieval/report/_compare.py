"""``compare_runs``: a candidate against its baseline, example by example, with a promotion
decision (two windows of online scoring: as independent samples, without one)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aieval.core import ROW_CHECK_PREFIX, low_coverage
from aieval.errors import ConfigError
from aieval.grading import RunStanding
from aieval.report._comparable import (
    comparison_warnings,
    digest,
    judge_shares,
    scorer_changes,
    tally_judges,
)
from aieval.report._compare_columns import column_parts, kept_parts
from aieval.report._compare_conversations import (
    ConversationSides,
    compared_section,
    conversation_sides,
)
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
from aieval.report._compare_sums import sums_parts
from aieval.report._compare_windows import INDEPENDENT_WINDOWS, is_window_run, window_parts
from aieval.report._epochs import cached_split_warning, judge_noise_hints, side_epochs
from aieval.report._evidence import RuleResult
from aieval.report._header import SCHEMA_VERSION, resolve_run, run_header
from aieval.report._intervals import IntervalMethod
from aieval.report._judge_figures import compared_judge_figures
from aieval.report._policy import (
    PromotionDecision,
    PromotionPolicy,
    decide,
    example_inputs,
    with_rules,
)
from aieval.report._policy_correction import corrected_rule
from aieval.report._policy_judges import certified_judges_rule
from aieval.report._provenance import provenance
from aieval.report._samples import (
    ExampleNumbers,
    example_numbers,
    merge_epochs,
)
from aieval.report._tally import JudgeTally
from aieval.report._tool_section import ComparedTools, compare_tools, run_tools
from aieval.store import BaselineChoice, RunRow, Store

__all__ = ["Comparison", "compare_runs", "describe_changes"]

_GRADE_RANK = {"A": 0, "B": 1, "C": 2, "D": 3, "F": 4}
_MAX_IDS = 50
_CORRECTNESS = ("correctness",)
_SAFETY = ("safety", "validation", "security")

Pair = tuple[ExampleNumbers, ExampleNumbers]


@dataclass(frozen=True, slots=True)
class Comparison:
    """A candidate run against a baseline run, paired by example id.

    Attributes mirror the keys of :meth:`to_dict` (see ``docs/reports.md``); ``decision`` is the
    promotion decision of the policy. ``paired`` counts the examples both runs have (by id);
    ``scored_paired`` those of them scored in both, the count the ``paired_examples`` rule uses.
    """

    baseline: dict[str, Any]
    candidate: dict[str, Any]
    paired: int
    only_baseline: list[str]
    only_candidate: list[str]
    only_baseline_count: int
    only_candidate_count: int
    metrics: list[dict[str, Any]]
    regressions: list[dict[str, Any]]
    improvements: list[dict[str, Any]]
    unchanged: int
    tie_break: dict[str, Any]
    decision: PromotionDecision
    regressions_count: int = 0
    improvements_count: int = 0
    warnings: list[str] = field(default_factory=list)
    scored_paired: int = 0
    provenance: dict[str, Any] = field(default_factory=dict)
    baseline_choice: BaselineChoice | None = None
    epochs: dict[str, Any] | None = None
    #: For runs whose scorers stored tool trajectories: both runs' per-tool figures and the
    #: change in precision and recall per tool (see ``report/_tool_section.py``); else None.
    tools: ComparedTools | None = None
    conversations: dict[str, Any] | None = None
    #: When either run has a judge scorer: per judge its agreement with the candidate store's
    #: reviewers, certification and each run's raw vs corrected pass rate; else None.
    judge_figures: dict[str, Any] | None = None
    #: How the runs were compared when not paired by example id: two windows of online
    #: scoring are independent samples (``report/_compare_windows.py``); else None (paired).
    method: str | None = None

    @property
    def promote(self) -> bool:
        """Whether the policy lets the candidate replace the baseline."""
        return self.decision.promote

    @property
    def outcome(self) -> str:
        """``promote``, ``block`` or ``inconclusive`` (see :class:`PromotionDecision`)."""
        return self.decision.outcome

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data, ``kind: "comparison"``."""
        return {
            "kind": "comparison",
            "schema_version": SCHEMA_VERSION,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "paired": self.paired,
            "scored_paired": self.scored_paired,
            "only_baseline": self.only_baseline,
            "only_candidate": self.only_candidate,
            "only_baseline_count": self.only_baseline_count,
            "only_candidate_count": self.only_candidate_count,
            "metrics": self.metrics,
            "regressions": self.regressions,
            "improvements": self.improvements,
            "regressions_count": self.regressions_count,
            "improvements_count": self.improvements_count,
            "unchanged": self.unchanged,
            "tie_break": self.tie_break,
            "decision": self.decision.to_dict(),
            "warnings": self.warnings,
            "provenance": self.provenance,
            # only when the baseline was chosen by name: which run, and why
            **(
                {"baseline_choice": self.baseline_choice.to_dict()}
                if self.baseline_choice is not None
                else {}
            ),
            **({"tools": self.tools.to_dict()} if self.tools is not None else {}),
            **({"epochs": self.epochs} if self.epochs is not None else {}),
            **({"conversations": self.conversations} if self.conversations is not None else {}),
            **({"judge_figures": self.judge_figures} if self.judge_figures is not None else {}),
            **({"method": self.method} if self.method is not None else {}),
        }


def compare_runs(
    store: Store,
    baseline: str | RunRow | BaselineChoice,
    candidate: str | RunRow,
    *,
    policy: PromotionPolicy | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
    max_examples: int | None = 200,
    baseline_store: Store | None = None,
    interval_method: IntervalMethod | None = None,
    bootstrap_max_n: int | None = None,
) -> Comparison:
    """Compare two stored runs example by example and decide whether the candidate promotes.

    Two runs of plain verdicts that kept their columns as they were written (``run_columns``,
    any interval method, one store or two) are compared from those arrays. Otherwise two plain
    runs of one store whose intervals are closed form (``interval_method: auto``,
    ``bootstrap_max_n`` paired examples or more) are compared from sums in the database
    (``Store.pair_sums``), reading only the examples listed as changed; other runs whose every
    sample has a plain verdict (``Store.plain_run``) are read and compared as columns; any
    other pair sample by sample. All give the same numbers (the sums within float rounding).

    Args:
        store: the run store.
        baseline: a run id, id prefix, a :class:`RunRow`, a :class:`BaselineChoice`, or a run
            name: the baseline :meth:`Store.choose_baseline` picks among that name's runs (the
            latest other run that completed, on the whole dataset and the candidate's dataset
            version, else the best there is, with a warning); the choice is the comparison's
            ``baseline_choice``.
        candidate: a run id, id prefix, name (its latest run) or :class:`RunRow`.
        policy: the promotion policy; defaults to :class:`PromotionPolicy` ().
        confidence: coverage of the paired bootstrap intervals of the metric deltas.
        n_resamples: bootstrap resamples.
        seed: bootstrap seed.
        max_examples: how many regressions and improvements to list (worst/best first);
            ``None`` lists all. The counts are always complete.
        baseline_store: the store holding the baseline, when it is not ``store`` (a store
            kept from the main branch's job, say); the candidate is always read from ``store``.
        interval_method: ``auto`` (closed forms from ``bootstrap_max_n`` paired examples on)
            or ``bootstrap`` (the seeded bootstrap at any size); ``None`` keeps the policy's.
            Given, it becomes the policy's, so the decision records the setting it used.
        bootstrap_max_n: the paired examples from which ``auto`` uses closed forms; ``None``
            keeps the policy's.

    Raises:
        RunNotFoundError: a reference matches no run.
    """
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence!r}")
    policy = (policy or PromotionPolicy()).with_intervals(interval_method, bootstrap_max_n)
    base_store = store if baseline_store is None else baseline_store
    cand_row = resolve_run(store, candidate)
    choice, base_row = _baseline(base_store, baseline, cand_row)
    if base_row.id == cand_row.id:
        raise ConfigError(
            f"the baseline and the candidate are the same run ({cand_row.id}): compare two runs"
        )
    if windows := _windows(base_store, store, (base_row, cand_row), policy, choice, confidence):
        return windows
    sides = conversation_sides(base_store, base_row, store, cand_row)
    parts = _parts(
        base_store, base_row, store, cand_row, policy, sides,
        confidence=confidence, n_resamples=n_resamples, seed=seed, max_examples=max_examples,
    )  # fmt: skip
    # the judges' rules read run configs, labels and the judges' verdicts, not the paired
    # figures: one place for every comparison path
    rows = (base_row, cand_row)
    decision = with_rules(
        parts.decision,
        certified_judges_rule(store, rows, policy),
        corrected_rule((base_store, store), rows, policy),
    )
    figures = compared_judge_figures(
        (base_store, store), rows, floor=policy.judge_kappa_floor,
        min_labels=policy.judge_min_labels,
    )  # fmt: skip
    epochs = _epochs(base_row, cand_row)
    if epochs is not None:
        _epoch_warnings(decision, epochs, (base_store, store), rows)
    return Comparison(
        baseline=_side_header(base_row),
        candidate=_side_header(cand_row),
        paired=parts.paired,
        only_baseline=parts.only_baseline[:_MAX_IDS],
        only_candidate=parts.only_candidate[:_MAX_IDS],
        only_baseline_count=len(parts.only_baseline),
        only_candidate_count=len(parts.only_candidate),
        metrics=parts.metrics,
        regressions=parts.regressions,
        improvements=parts.improvements,
        unchanged=parts.paired - parts.regressions_count - parts.improvements_count,
        tie_break=parts.tie_break,
        decision=decision,
        regressions_count=parts.regressions_count,
        improvements_count=parts.improvements_count,
        warnings=decision.warnings,
        scored_paired=next(
            int(r.details["paired"]) for r in decision.rules if r.rule == "paired_examples"
        ),
        provenance=provenance(
            base_row, cand_row, next(r for r in decision.rules if r.rule == "comparable_runs")
        ),
        baseline_choice=choice,
        tools=compare_tools(
            run_tools(base_store, base_row, confidence), run_tools(store, cand_row, confidence)
        ),
        epochs=epochs,
        conversations=compared_section(sides) if sides is not None else None,
        judge_figures=None if figures is None else figures.to_dict(),
    )


def _epoch_warnings(
    decision: PromotionDecision,
    epochs: dict[str, Any],
    stores: tuple[Store, Store],
    rows: tuple[RunRow, RunRow],
) -> None:
    """Add to ``decision`` the hints of judge noise (when inconclusive) and the warnings of
    variance splits read from cached judge calls, for runs of epochs."""
    if decision.outcome == "inconclusive":
        decision.warnings.extend(judge_noise_hints(epochs))
    for side, side_store, row in zip(("baseline", "candidate"), stores, rows, strict=True):
        if (epochs[side] or {}).get("variance"):
            cached = side_store.cached_judge_calls(row.id)
            if cached:
                decision.warnings.append(cached_split_warning(side, cached))


def _windows(
    base_store: Store,
    store: Store,
    rows: tuple[RunRow, RunRow],
    policy: PromotionPolicy,
    choice: BaselineChoice | None,
    confidence: float,
) -> Comparison | None:
    """Two windows of online scoring holding different traces, compared as independent
    samples (no pairing, no promotion decision); ``None`` for any other pair of runs."""
    base_row, cand_row = rows
    if not (is_window_run(base_row) and is_window_run(cand_row)):
        return None
    parts = window_parts(base_store, base_row, store, cand_row, policy, confidence=confidence)
    if parts is None:
        return None
    same = RuleResult("comparable_runs", True, "windows of online scoring")
    return Comparison(
        baseline=_side_header(base_row),
        candidate=_side_header(cand_row),
        paired=parts.paired,
        only_baseline=parts.only_baseline[:_MAX_IDS],
        only_candidate=parts.only_candidate[:_MAX_IDS],
        only_baseline_count=len(parts.only_baseline),
        only_candidate_count=len(parts.only_candidate),
        metrics=parts.metrics,
        regressions=[],
        improvements=[],
        unchanged=0,
        tie_break=parts.tie_break,
        decision=parts.decision,
        warnings=parts.decision.warnings,
        provenance=provenance(base_row, cand_row, same),
        baseline_choice=choice,
        method=INDEPENDENT_WINDOWS,
    )


def _parts(
    base_store: Store,
    base_row: RunRow,
    store: Store,
    cand_row: RunRow,
    policy: PromotionPolicy,
    sides: ConversationSides | None,
    *,
    confidence: float,
    n_resamples: int,
    seed: int | None,
    max_examples: int | None,
) -> ComparedParts:
    """The comparison's figures from sums, columns or records (see :func:`compare_runs`)."""
    kwargs: dict[str, Any] = {"confidence": confidence, "max_examples": max_examples}
    if sides is not None and any(sides.skipped):
        # invalid conversations never decide the verdict: read sample by sample without them
        return _record_parts(
            base_store, base_row, store, cand_row, policy, n_resamples=n_resamples, seed=seed,
            skip=sides.skipped, unpaired=sides.unpaired, **kwargs,
        )  # fmt: skip
    parts = kept_parts(
        base_store, base_row, store, cand_row, policy, n_resamples=n_resamples, seed=seed,
        **kwargs,
    )  # fmt: skip
    if parts is None and base_store is store:
        parts = sums_parts(store, base_row, cand_row, policy, **kwargs)
    if parts is not None:
        return parts
    kwargs.update(n_resamples=n_resamples, seed=seed)
    if base_store.plain_run(base_row.id) and store.plain_run(cand_row.id):
        return column_parts(base_store, base_row, store, cand_row, policy, **kwargs)
    return _record_parts(base_store, base_row, store, cand_row, policy, **kwargs)


def _baseline(
    store: Store, baseline: str | RunRow | BaselineChoice, candidate: RunRow
) -> tuple[BaselineChoice | None, RunRow]:
    """The baseline's row, and how it was chosen when it was named (not given by id)."""
    if isinstance(baseline, str) and baseline:
        baseline = store.baseline_for(baseline, candidate)
    if isinstance(baseline, BaselineChoice):
        return baseline, baseline.run
    return None, resolve_run(store, baseline)


def _epochs(base_row: RunRow, cand_row: RunRow) -> dict[str, Any] | None:
    """Each side's pass^k, pass@k and variance split as its run stored them, when either side
    ran epochs."""
    base, cand = side_epochs(base_row.metrics), side_epochs(cand_row.metrics)
    if base is None and cand is None:
        return None
    return {"baseline": base, "candidate": cand}


def _record_parts(
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
    skip: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset()),
    unpaired: frozenset[str] = frozenset(),
) -> ComparedParts:
    """The comparison read sample by sample (every kind of run; the reference of
    :func:`column_parts`), without the samples in ``skip`` (baseline's, candidate's ids) and
    the examples in ``unpaired`` (on neither side)."""
    # a run of epochs has N samples per example: each side pairs by example, its numbers the
    # mean over its epochs (merge_epochs), so the paired test sees one value per example
    base_epochs: dict[str, list[ExampleNumbers]] = {}
    keys: dict[str, tuple[bytes, bytes]] = {}  # per example: digests of its input and answer key
    base_judges: dict[str, JudgeTally] = {}
    for sample in base_store.iter_samples(base_row.id, predictions=False):
        if sample.id in skip[0] or sample.example_id in unpaired:
            continue
        base_epochs.setdefault(sample.example_id, []).append(example_numbers(sample))
        keys[sample.example_id] = (digest(sample.input), digest(sample.expected))
        tally_judges(sample, base_judges)
    judges: dict[str, JudgeTally] = {}
    cand_epochs: dict[str, list[ExampleNumbers]] = {}
    changed: list[str] = []
    changed_expected: list[str] = []
    for sample in store.iter_samples(cand_row.id, predictions=False):
        example_id = sample.example_id
        if sample.id in skip[1] or example_id in unpaired:
            continue
        first = example_id not in cand_epochs
        cand_epochs.setdefault(example_id, []).append(example_numbers(sample))
        if first and example_id in keys:
            seen_input, seen_expected = keys[example_id]
            if seen_input != digest(sample.input):
                changed.append(example_id)
            if seen_expected != digest(sample.expected):
                changed_expected.append(example_id)
        tally_judges(sample, judges)
    base = {i: merge_epochs(group, i) for i, group in base_epochs.items()}
    cand = {i: merge_epochs(group, i) for i, group in cand_epochs.items()}
    warnings = comparison_warnings(
        base_row, cand_row, {"baseline": base_judges, "candidate": judges}, policy
    )
    added = _scorers(cand.values()) - _scorers(base.values())
    if added:
        # the baseline has no numbers for them: they would shift the candidate's mean alone
        cand = {i: without_scorers(ex, added) for i, ex in cand.items()}
        warnings.append(added_warning(added))
    pairs = [(b, cand[i]) for i, b in base.items() if i in cand]
    pairs, uneven = _shared_row_checks(pairs, added)
    if uneven:
        warnings.append(uneven_warning(uneven))
    only_b = [i for i in base if i not in cand]
    only_c = [i for i in cand if i not in base]
    regressions, improvements = _changes(pairs, policy.example_delta)
    inputs = example_inputs(
        [b for b, _ in pairs],
        [c for _, c in pairs],
        unpaired=len(only_b) + len(only_c),
        warnings=warnings,
        baseline_only=[base[i] for i in only_b],
        judges=judge_shares(judges),
        changed_inputs=changed,
        baseline_judges=judge_shares(base_judges),
        changed_expected=changed_expected,
        scorer_changes=scorer_changes(base_row.config, cand_row.config),
    )
    decision = decide(inputs, policy)
    return ComparedParts(
        paired=len(pairs),
        only_baseline=only_b,
        only_candidate=only_c,
        metrics=_metrics(pairs, confidence, n_resamples, seed, policy),
        regressions=regressions[:max_examples] if max_examples is not None else regressions,
        improvements=improvements[:max_examples] if max_examples is not None else improvements,
        regressions_count=len(regressions),
        improvements_count=len(improvements),
        tie_break=_tie_break(pairs),
        decision=decision,
    )


def _side_header(row: RunRow) -> dict[str, Any]:
    """A side's run header, with its ``epochs`` when it ran more than one, the minimums it
    was held to (met or not, with the numbers) when it had any, and the scorers its pass rate
    says nothing about (``low_coverage``) when there are some."""
    header = run_header(row)
    epochs = row.config.get("epochs")
    if isinstance(epochs, int) and epochs > 1:
        header["epochs"] = epochs
    minimums = (row.metrics or {}).get("minimums")
    if minimums:
        header["minimums"] = minimums
    scorers = (row.metrics or {}).get("scorers")
    low = low_coverage(scorers) if isinstance(scorers, Mapping) else []
    if low:  # the side's pass rate says nothing about these: the renderers say so beside it
        header["low_coverage"] = [c.to_dict() for c in low]
    return header


def _scorers(examples: Iterable[ExampleNumbers]) -> set[str]:
    """Scorer names of ungraded examples (graded ones weigh criteria, not scorers)."""
    return {name for ex in examples if not ex.graded for name in ex.scores}


def _shared_row_checks(pairs: list[Pair], added: set[str]) -> tuple[list[Pair], int]:
    """``pairs`` with each ungraded side's weighted score recomputed without the rows' own
    checks (``row:...``) the other side lacks (and, for the candidate, without the ``added``
    scorers, already left out), and how many pairs that changed. A side whose target failed
    keeps its 0."""
    out: list[Pair] = []
    uneven = 0
    for b, c in pairs:
        rows_b = {n for n in b.scores if n.startswith(ROW_CHECK_PREFIX)}
        rows_c = {n for n in c.scores if n.startswith(ROW_CHECK_PREFIX)}
        if rows_b == rows_c or b.error or c.error or b.graded or c.graded:
            out.append((b, c))
            continue
        uneven += 1
        out.append(
            (without_scorers(b, rows_b - rows_c), without_scorers(c, (rows_c - rows_b) | added))
        )
    return out, uneven


def _metrics(
    pairs: list[Pair],
    confidence: float,
    n_resamples: int,
    seed: int | None,
    policy: PromotionPolicy,
) -> list[dict[str, Any]]:
    getters: list[tuple[str, Callable[[ExampleNumbers], float | None]]] = [
        ("weighted_score", lambda ex: ex.weighted_score),
        ("pass_rate", lambda ex: ex.pass_value),
    ]
    gates = sorted({g for b, c in pairs for g in (*b.gates, *c.gates)})
    getters += [(f"gate:{g}", _gate_getter(g)) for g in gates]
    criteria = _ordered(name for b, c in pairs for name in (*b.criteria, *c.criteria))
    getters += [(name, _criterion_getter(name)) for name in criteria]
    scorers = _ordered(name for b, c in pairs for name in (*b.scores, *c.scores))
    # A scorer feeding a criterion of the same name is the same number; list it once.
    getters += [(name, _scorer_getter(name)) for name in scorers if name not in set(criteria)]
    metrics = [_metric(name, get, pairs) for name, get in getters]
    shares = any(ex.pass_share is not None for pair in pairs for ex in pair)
    return metric_rows(metrics, confidence, n_resamples, seed, policy=policy, pass_shares=shares)


def _metric(
    name: str, get: Callable[[ExampleNumbers], float | None], pairs: list[Pair]
) -> MetricValues:
    values = [(get(b), get(c)) for b, c in pairs]
    both = [(vb, vc) for vb, vc in values if vb is not None and vc is not None]
    # examples one side scored and the other did not never vanish from the row unsaid
    missing = {
        "candidate_missing": sum(vb is not None and vc is None for vb, vc in values),
        "baseline_missing": sum(vb is None and vc is not None for vb, vc in values),
    }
    if not both:
        return name, None, None, missing
    return name, np.array([v for v, _ in both]), np.array([v for _, v in both]), missing


def _gate_getter(name: str) -> Callable[[ExampleNumbers], float | None]:
    return lambda ex: None if name not in ex.gates else float(not ex.gates[name])


def _criterion_getter(name: str) -> Callable[[ExampleNumbers], float | None]:
    return lambda ex: ex.criteria[name].normalized if name in ex.criteria else None


def _scorer_getter(name: str) -> Callable[[ExampleNumbers], float | None]:
    return lambda ex: ex.scores.get(name)


def _ordered(names: Any) -> list[str]:
    return list(dict.fromkeys(names))


def _changes(
    pairs: list[Pair], example_delta: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    regressions: list[tuple[tuple[float, ...], dict[str, Any]]] = []
    improvements: list[tuple[tuple[float, ...], dict[str, Any]]] = []
    for b, c in pairs:
        flip = int(c.passed) - int(b.passed)
        steps = _GRADE_RANK.get(b.grade or "", 0) - _GRADE_RANK.get(c.grade or "", 0)
        if b.grade is None or c.grade is None:
            steps = 0
        delta = None
        if b.weighted_score is not None and c.weighted_score is not None:
            delta = c.weighted_score - b.weighted_score
        worse = flip < 0 or steps < 0 or (delta is not None and delta <= -example_delta)
        better = flip > 0 or steps > 0 or (delta is not None and delta >= example_delta)
        if not (worse or better):
            continue
        entry = {
            "id": b.id,
            "baseline": side_row(b),
            "candidate": side_row(c),
            "delta": delta,
            "changes": describe_changes(b, c),
        }
        key = (float(flip), float(steps), delta if delta is not None else 0.0)
        if worse:  # mixed changes count as regressions: a drop is what a reviewer must see
            regressions.append((key, entry))
        else:
            improvements.append((tuple(-k for k in key), entry))
    regressions.sort(key=lambda item: item[0])
    improvements.sort(key=lambda item: item[0])
    return [e for _, e in regressions], [e for _, e in improvements]


def _tie_break(pairs: list[Pair]) -> dict[str, Any]:
    return tie_break_row(_standing([b for b, _ in pairs]), _standing([c for _, c in pairs]))


def _standing(examples: Sequence[ExampleNumbers]) -> RunStanding | None:
    scores = [ex.weighted_score for ex in examples if ex.weighted_score is not None]
    if not scores:
        return None
    latencies = [ex.latency_s for ex in examples if ex.latency_s is not None]
    costs = [ex.cost for ex in examples if ex.cost is not None]
    # a sum missing a cost that was spent is no total: the cost rule then does not rank
    unknown = any(ex.unpriced for ex in examples)
    return RunStanding(
        weighted_score=float(np.mean(scores)),
        gate_failures=sum(not ok for ex in examples for ok in ex.gates.values()),
        correctness=_criterion_mean(examples, _CORRECTNESS, "objective"),
        safety=_criterion_mean(examples, _SAFETY, None),
        p95_latency=float(np.quantile(latencies, 0.95)) if latencies else None,
        cost=float(sum(costs)) if costs and not unknown else None,
    )


def _criterion_mean(
    examples: Sequence[ExampleNumbers], words: tuple[str, ...], kind: str | None
) -> float | None:
    values = [
        c.normalized
        for ex in examples
        for name, c in ex.criteria.items()
        if any(w in name.lower() for w in words) or (kind is not None and c.kind == kind)
    ]
    return float(np.mean(values)) if values else None
