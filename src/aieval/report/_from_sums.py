"""A report's numbers from the sums the database computed (:meth:`Store.run_sums`).

Taken when every interval of the report is closed form (``interval_method: auto`` and each
non-empty column at least ``bootstrap_max_n`` values) and every sample is a plain verdict in
the typed columns: then no value list is read back. Decoded are only the distinct failed
verdict texts (grouped in SQL), the judges' score metadata and, in a run of epochs, each
sample's epoch. A graded or workflow run is summed so too when its graded figures (weight
coverage, workflow groups, agents) are in typed rows (:meth:`Store.graded_sums`); one with a
sample stored before them, or whose criteria's floors differ between samples, keeps the
record path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from json import loads
from typing import Any

from aieval.core import Verdict, low_coverage
from aieval.report._bulk import epoch_flags, judge_tallies
from aieval.report._epochs import epochs_section, minimums_section
from aieval.report._graded_figures import agent_rows, coverage_block, gate_rows, workflow_groups
from aieval.report._header import pass_rate, run_header
from aieval.report._intervals import IntervalPolicy, closed_form_block_from_sums
from aieval.report._tally import (
    GroupTally,
    JudgeTally,
    ReasonTally,
    column_row,
    grade_counts,
    reason_text,
    run_warnings,
)
from aieval.stats import histogram
from aieval.store import (
    CallTotals,
    CriterionSums,
    FailedVerdict,
    GradedSums,
    ReportSums,
    RunRow,
    RunSums,
    Store,
    ValueSums,
)

__all__ = ["SumsReport", "sums_report"]

#: the histogram edges every report column shows (``aieval.stats.histogram`` on [0, 1])
_EDGES = histogram([], bins=10, range=(0.0, 1.0))["edges"]
_MAX_IDS = 5


@dataclass(frozen=True, slots=True)
class SumsReport:
    """The fields of a :class:`~aieval.report.RunReport` the sums give (the rest the caller
    adds: the code section)."""

    fields: dict[str, Any]


def sums_report(
    store: Store,
    row: RunRow,
    slice_by: tuple[str, ...],
    confidence: float,
    intervals: IntervalPolicy,
    judge_warning_rate: float,
) -> SumsReport | None:
    """The report's fields from the database's sums, or ``None`` when this run takes another
    path (see the module docstring)."""
    if intervals.interval_method != "auto":
        return None
    extras = store.report_sums(row.id)
    if extras.samples < intervals.bootstrap_max_n:
        return None
    figures = store.graded_sums(row.id) if extras.not_plain else None
    if extras.not_plain and figures is None:
        return None  # a graded sample stored before its figures were typed
    sums = store.run_sums(row.id, slice_by)
    if sums is None or not _graded_summable(sums, figures):
        return None
    graded = figures is not None and figures.graded > 0
    # a scorer that feeds a graded criterion of the same name is listed once, as the criterion
    named = {c.name for c in sums.criteria}
    scorers = [s for s in sums.scorers if s.name not in named]
    columns = [sums.weighted, *(c.values for c in sums.criteria), *(s.values for s in scorers)]
    if any(0 < c.n < intervals.bootstrap_max_n for c in columns):
        return None  # a column drawn by the bootstrap needs its values
    # the judges' score metadata is read only when the rollups found some (or do not know)
    judges = judge_tallies(store.judged_scores(row.id) if extras.judged != 0 else [])
    kept = store.run_totals(row.id)  # the run's rollups (kept by report_sums above)
    totals = kept.call_totals() if kept is not None else store.call_totals(row.id)
    return SumsReport(
        {
            "run": run_header(row),
            "samples": sums.samples,
            "target_errors": sums.target_errors,
            "graded": graded,
            "pass_rate": pass_rate(sums.passed, sums.samples, confidence),
            "weighted_score": _weighted_block(sums.weighted, extras, confidence, figures),
            "grades": grade_counts(figures.grades) if figures is not None and graded else None,
            "gates": gate_rows(((g.name, g.failures, g.n) for g in sums.gates), confidence),
            "criteria": [
                *(criterion_row(c, sums.samples, confidence) for c in sums.criteria),
                *(_scorer_row(s, sums.samples, confidence) for s in scorers),
            ],
            "failure_reasons": _reasons(store.failed_verdicts(row.id)).top(),
            "judges": {k: j.to_dict(judge_warning_rate) for k, j in sorted(judges.items())},
            "latency": {
                "mean": sums.latency.mean,
                "p50": sums.latency.p50,
                "p95": sums.latency.p95,
                "max": sums.latency.maximum,
            },
            "tokens": _tokens(totals),
            "cost": extras.cost_total if extras.cost_n and not totals.unpriced else None,
            "retries": totals.retries,
            "cached": totals.cached_samples,
            "cache": {
                "calls": totals.answered_calls,
                "cached": totals.cached_calls,
                "share": (
                    totals.cached_calls / totals.answered_calls if totals.answered_calls else None
                ),
            },
            "groups": {
                "workflow": (
                    workflow_groups(figures, _run_workflow(row), confidence)
                    if figures is not None and graded
                    else []
                ),
                "slices": {
                    name: [
                        _group(g).to_dict(g.key, graded, confidence)
                        for g in sorted(groups, key=lambda g: (-g.samples, g.key))
                    ]
                    for name, groups in sums.slices.items()
                },
                "agents": agent_rows(figures.agents) if figures is not None else [],
            },
            "warnings": _warnings(row, sums, judges, judge_warning_rate),
            "epochs": epochs_section(
                row.metrics or {}, epoch_flags(store, row.id) if sums.epochs else {}
            ),
            "minimums": minimums_section(row.metrics or {}),
            "low_coverage": [
                c.to_dict()
                for c in low_coverage(
                    {
                        s.name: {
                            "count": s.values.n,
                            "errors": s.errors,
                            "not_applicable": s.not_applicable,
                        }
                        for s in scorers
                    }
                )
            ],
        }
    )


def _graded_summable(sums: RunSums, figures: GradedSums | None) -> bool:
    """Whether the sums give the run's report exactly as the record path does: a run with gates
    or criteria has its graded figures, and every criterion's floor is the same in each sample
    that has one (the record path shows the last sample's)."""
    if figures is None:
        return not (sums.graded or sums.criteria or sums.gates)
    return all(c.floors_agree for c in sums.criteria)


def _run_workflow(row: RunRow) -> Any:
    """The run's workflow id (its config's ``workflow.id``), the group of graded samples whose
    evaluation names none."""
    workflow = row.config.get("workflow")
    return workflow.get("id") if isinstance(workflow, Mapping) else None


def _weighted_block(
    values: ValueSums, extras: ReportSums, confidence: float, figures: GradedSums | None
) -> dict[str, Any] | None:
    if not values.n:
        return None
    rate = extras.weighted_zeros + extras.weighted_hundreds == values.n
    block = closed_form_block_from_sums(
        values.n,
        values.total,
        values.squares,
        extras.weighted_hundreds if rate else None,
        confidence,
        scale=100.0,
    )
    coverage = figures.coverage if figures is not None else None
    if coverage is None or not coverage.n or coverage.minimum is None:
        return block
    return coverage_block(
        block, coverage.n, coverage.total / coverage.n, coverage.minimum, dict(coverage.unscored)
    )


def criterion_row(criterion: CriterionSums, samples: int, confidence: float) -> dict[str, Any]:
    """A graded criterion's row from its sums (``_RunTally._criterion_rows``)."""
    values = criterion.values
    return column_row(
        criterion.name,
        "criterion",
        samples=samples,
        n=values.n,
        errors=criterion.errors,
        not_applicable=0,
        block=_block(values, confidence),
        quantiles=values.quantiles,
        histogram={"edges": list(_EDGES), "counts": list(values.histogram or (0,) * 10)},
        floor=criterion.floor,
        floor_violations=criterion.floor_violations,
    )


def _block(values: ValueSums, confidence: float) -> dict[str, Any] | None:
    return (
        closed_form_block_from_sums(
            values.n,
            values.total,
            values.squares,
            round(values.total) if values.binary else None,
            confidence,
        )
        if values.n
        else None
    )


def _scorer_row(scorer: Any, samples: int, confidence: float) -> dict[str, Any]:
    values: ValueSums = scorer.values
    block = (
        closed_form_block_from_sums(
            values.n,
            values.total,
            values.squares,
            round(values.total) if values.binary else None,
            confidence,
        )
        if values.n
        else None
    )
    return column_row(
        scorer.name,
        "scorer",
        samples=samples,
        n=values.n,
        errors=scorer.errors,
        not_applicable=scorer.not_applicable,
        block=block,
        quantiles=values.quantiles,
        histogram={"edges": list(_EDGES), "counts": list(values.histogram or (0,) * 10)},
    )


def _reasons(verdicts: list[FailedVerdict]) -> ReasonTally:
    """The reasons tally of the failed samples, as the record path counts them sample by
    sample: each distinct list of reasons decoded once, its reasons counted once per sample that
    has it; a reason's first 5 samples merged from its texts' first samples, in order."""
    counts: dict[tuple[str, str, str], int] = {}
    firsts: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
    for verdict in verdicts:
        where = f"sample {verdict.first[0][1]!r}" if verdict.first else "a failed sample"
        data = loads(verdict.text)
        if not verdict.whole:  # the verdict's reasons alone, read as the whole one reads them
            data = {"passed": False, "reasons": data}
        decoded = Verdict.from_dict(data, where)
        for reason in decoded.reasons:
            key = (reason.kind, reason.key, reason_text(reason.text))
            counts[key] = counts.get(key, 0) + verdict.count
            firsts.setdefault(key, []).extend(verdict.first)
    tally = ReasonTally()
    for key, count in counts.items():
        ids: list[str] = []
        for _, sample_id in sorted(firsts[key]):
            if len(ids) < _MAX_IDS and sample_id not in ids:
                ids.append(sample_id)
        tally.counts[key] = [count, ids]
    return tally


def _tokens(totals: CallTotals) -> dict[str, Any]:
    from aieval._usage_figures import TokenTally, TokenTotal

    tokens = TokenTally()
    tokens.target = TokenTotal(
        totals.target_input_tokens,
        totals.target_output_tokens,
        totals.target_calls,
        totals.target_unreported,
    )
    tokens.judges = TokenTotal(
        totals.judge_input_tokens,
        totals.judge_output_tokens,
        totals.judge_calls,
        totals.judge_unreported,
    )
    return tokens.to_dict()


def _group(group: Any) -> GroupTally:
    return GroupTally(
        samples=group.samples,
        passed=group.passed,
        weighted_sum=group.weighted_total if group.weighted_n else 0.0,
        weighted_n=group.weighted_n,
        grades=Counter(group.grades),
    )


def _warnings(
    row: RunRow, sums: RunSums, judges: Mapping[str, JudgeTally], threshold: float
) -> list[str]:
    """The record path's warnings (``_RunTally._warnings``), from the sums."""
    return run_warnings(
        row,
        samples=sums.samples,
        weighted_n=sums.weighted.n,
        target_errors=sums.target_errors,
        scorers=[(s.name, s.values.n, s.not_applicable) for s in sums.scorers],
        judges=judges,
        judge_rate=threshold,
    )
