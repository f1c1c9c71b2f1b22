"""``build_report``: the minimum reporting bundle of spec section 10 for one stored run."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aieval._records import SampleRecord
from aieval._usage_figures import CacheTally, CostTally, TokenTally, TokenTotal
from aieval.core import ScorerCoverage, WorkflowDetail, low_coverage
from aieval.errors import ConfigError
from aieval.report._bulk import BulkNumbers, bulk_numbers
from aieval.report._conversations import conversations_section
from aieval.report._epochs import epochs_section, minimums_section
from aieval.report._from_sums import sums_report
from aieval.report._graded_figures import coverage_block, gate_rows
from aieval.report._header import SCHEMA_VERSION, pass_rate, resolve_run, run_header
from aieval.report._intervals import (
    BOOTSTRAP,
    DEFAULT_BOOTSTRAP_MAX_N,
    IntervalMethod,
    IntervalPolicy,
    closed_form_block,
    rate_successes,
)
from aieval.report._judge_figures import run_judge_figures
from aieval.report._samples import ExampleNumbers, numbers_of
from aieval.report._tally import (
    AgentTally,
    ColumnTally,
    GroupTally,
    JudgeTally,
    ReasonTally,
    column_row,
    grade_counts,
    run_warnings,
)
from aieval.report._tool_results import ToolFigures
from aieval.report._tool_section import run_tools
from aieval.stats import bootstrap_mean_cis, histogram, quantiles, sample_std
from aieval.store import CallTotals, RunRow, Store

__all__ = ["MISSING", "RunReport", "build_report"]

#: The slice key of samples whose metadata lacks the slice field.
MISSING = "(missing)"

#: Judge parse-failure and pairwise inconsistency rates above this draw a warning (spec 13).
JUDGE_WARNING_RATE = 0.10


@dataclass(frozen=True, slots=True)
class RunReport:
    """The reporting bundle of one run; :meth:`to_dict` is the JSON the renderers read.

    Attributes mirror the keys of the dict (see ``docs/reports.md``): ``run`` is the header,
    ``pass_rate`` carries a Wilson interval, ``weighted_score`` a bootstrap interval of the mean
    on 0..100, ``criteria`` per-criterion distributions of normalized values, ``gates`` the
    hard-gate failure rate per gate.
    """

    run: dict[str, Any]
    samples: int
    target_errors: int
    graded: bool
    pass_rate: dict[str, Any]
    weighted_score: dict[str, Any] | None
    grades: dict[str, int] | None
    gates: list[dict[str, Any]]
    criteria: list[dict[str, Any]]
    failure_reasons: list[dict[str, Any]]
    judges: dict[str, dict[str, Any]]
    latency: dict[str, float | None]
    tokens: dict[str, Any]
    cost: float | None
    retries: int
    cached: int
    cache: dict[str, Any]
    groups: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    #: For code evaluations (``aieval.code``): per-problem c/n, pass@k, statuses; else None.
    code: dict[str, Any] | None = None
    #: For runs of ``epochs > 1``: pass@k and pass^k (run means and per example), the
    #: variance split of judged scorers; else None.
    epochs: dict[str, Any] | None = None
    #: For runs held to minimums: each minimum, whether it was met, what missed; else None.
    minimums: dict[str, Any] | None = None
    #: The scorers the pass rate says nothing about (see :func:`aieval.core.low_coverage`):
    #: each that scored no sample, or under half its samples with most of the rest n/a.
    low_coverage: list[dict[str, Any]] = field(default_factory=list)
    #: For runs whose scorers stored tool trajectories: per scorer, the per-tool figures
    #: (see ``report/_tool_figures.py``); empty otherwise, and then no ``tools`` key.
    tools: tuple[ToolFigures, ...] = ()
    #: For runs of conversations: how they ended, stop reasons, turns, failures and invalid
    #: ones by scenario and turn (see ``report/_conversations.py``); else None.
    conversations: dict[str, Any] | None = None
    #: For runs with a judge scorer: per judge its agreement with reviewers, certification and
    #: raw vs corrected pass rate, from the store's review labels (``report/_judge_figures.py``);
    #: else None.
    judge_figures: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data, ``kind: "report"``; a ``code`` section only for code evaluations."""
        data = {
            "kind": "report",
            "schema_version": SCHEMA_VERSION,
            "run": self.run,
            "samples": self.samples,
            "target_errors": self.target_errors,
            "graded": self.graded,
            "pass_rate": self.pass_rate,
            "weighted_score": self.weighted_score,
            "grades": self.grades,
            "gates": self.gates,
            "criteria": self.criteria,
            "failure_reasons": self.failure_reasons,
            "judges": self.judges,
            "latency": self.latency,
            "tokens": self.tokens,
            "cost": self.cost,
            "retries": self.retries,
            "cached": self.cached,
            "cache": self.cache,
            "groups": self.groups,
            "warnings": self.warnings,
        }
        if self.code is not None:
            data["code"] = self.code
        if self.epochs is not None:
            data["epochs"] = self.epochs
        if self.minimums is not None:
            data["minimums"] = self.minimums
        if self.low_coverage:
            data["low_coverage"] = self.low_coverage
        if self.tools:
            data["tools"] = [figures.to_dict() for figures in self.tools]
        if self.conversations is not None:
            data["conversations"] = self.conversations
        if self.judge_figures is not None:
            data["judge_figures"] = self.judge_figures
        return data


def build_report(
    store: Store,
    run: str | RunRow,
    *,
    slice_by: Sequence[str] = (),
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
    interval_method: IntervalMethod = "auto",
    bootstrap_max_n: int = DEFAULT_BOOTSTRAP_MAX_N,
) -> RunReport:
    """Build the reporting bundle of a stored run in one pass over its samples.

    Args:
        store: the run store.
        run: a run id, unique id prefix, name (its latest run), or a :class:`RunRow`.
        slice_by: metadata fields (dotted paths allowed) to break results down by.
        confidence: coverage of every interval.
        n_resamples: bootstrap resamples of the weighted score's and each column's interval.
        seed: bootstrap seed, so the same run gives the same report.
        interval_method: ``auto`` (closed forms for columns of at least ``bootstrap_max_n``
            values: Student's t for a mean, Wilson for a 0/1 rate) or ``bootstrap`` (the
            seeded bootstrap at any size).
        bootstrap_max_n: the column size from which ``auto`` uses closed forms.

    Raises:
        RunNotFoundError: no run matches ``run``.
        ConfigError: a setting is out of range.
    """
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence!r}")
    intervals = IntervalPolicy.of(interval_method, bootstrap_max_n)
    row = resolve_run(store, run)
    summed = sums_report(store, row, tuple(slice_by), confidence, intervals, JUDGE_WARNING_RATE)
    if summed is not None:
        # every interval closed form: the database's sums, no value read back
        report = _with_sections(RunReport(**summed.fields), store, row)
        return _with_tools(report, store, row, confidence)
    workflow = row.config.get("workflow")
    tally = _RunTally(
        tuple(slice_by), workflow.get("id") if isinstance(workflow, Mapping) else None
    )
    if store.plain_run(row.id):
        # every verdict plain: read as columns, the same numbers without a record per sample
        tally.add_bulk(bulk_numbers(store, row.id, tally.slice_by, _slice_key))
        tally.add_totals(store.call_totals(row.id))
    else:
        for sample in store.iter_samples(row.id, texts=False):
            tally.add(sample)
    report = tally.report(row, confidence, n_resamples, seed, intervals)
    return _with_tools(_with_sections(report, store, row), store, row, confidence)


def _with_sections(report: RunReport, store: Store, row: RunRow) -> RunReport:
    """Attach the sections of a kind of run: code evaluations, conversations, judges."""
    report = _with_code_section(report, store, row)
    conversations = conversations_section(store, row)
    if conversations is not None:
        report = dataclasses.replace(report, conversations=conversations)
    figures = run_judge_figures(store, row)
    if figures is None:
        return report
    return dataclasses.replace(report, judge_figures=figures.to_dict())


def _with_code_section(report: RunReport, store: Store, row: RunRow) -> RunReport:
    """Attach the per-problem summary when the run is a code evaluation (``task: code``)."""
    metadata = row.config.get("metadata")
    if not isinstance(metadata, Mapping) or metadata.get("task") != "code":
        return report
    from aieval.code import code_report

    return dataclasses.replace(report, code=code_report(store, row.id).to_dict())


def _with_tools(report: RunReport, store: Store, row: RunRow, confidence: float) -> RunReport:
    """Attach the per-tool figures when the run's scorers stored tool trajectories."""
    tools = run_tools(store, row, confidence)
    return dataclasses.replace(report, tools=tuple(tools)) if tools else report


def _left_out(rate: dict[str, Any], invalid: int) -> dict[str, Any]:
    """The pass rate block with its count of invalid samples left out (when any)."""
    return {**rate, "invalid": invalid} if invalid else rate


class _RunTally:
    def __init__(self, slice_by: tuple[str, ...], workflow: Any) -> None:
        self.slice_by = slice_by
        self.workflow = workflow
        self.samples = self.passed = self.target_errors = 0
        #: invalid samples (see :attr:`Verdict.invalid`): out of the pass rate
        self.invalid = 0
        self.retries = self.cached = 0
        self.graded = False
        self.weighted: list[float] = []
        self.grades: Counter[str] = Counter()
        self.gates: dict[str, list[int]] = {}
        self.criteria: dict[str, ColumnTally] = {}
        self.scorers: dict[str, ColumnTally] = {}
        self.reasons = ReasonTally()
        self.judges: dict[str, JudgeTally] = {}
        self.latency: list[float] = []
        self.tokens = TokenTally()
        self.cost = CostTally()
        self.calls = CacheTally()
        self.workflows: dict[str, GroupTally] = {}
        self.slices: dict[str, dict[str, GroupTally]] = {f: {} for f in slice_by}
        self.agents: dict[str, AgentTally] = {}
        #: example id -> pass flag of each of its answers (``None``: invalid), in a run of epochs
        self.epochs: dict[str, list[bool | None]] = {}
        #: per graded sample with a weighted score, the share of the weights it covers
        self.coverage: list[float] = []
        self.unscored: Counter[str] = Counter()

    def add(self, sample: SampleRecord) -> None:
        verdict = sample.graded_verdict()
        ex = numbers_of(sample, verdict)
        self.samples += 1
        self.invalid += verdict.invalid
        if sample.epoch is not None:
            flag = None if verdict.invalid else ex.passed
            self.epochs.setdefault(sample.example_id, []).append(flag)
        self.passed += ex.passed
        self.target_errors += sample.error is not None
        if ex.weighted_score is not None:
            self.weighted.append(ex.weighted_score)
        self._usage(sample)
        self._scorers(sample, verdict.invalid)
        if verdict.graded or verdict.gates or verdict.criteria or verdict.workflow is not None:
            self._graded(ex, verdict.workflow_detail)
        if not ex.passed and not verdict.invalid:  # invalid is no failure: counted apart
            self.reasons.collect(sample, verdict)
        for name in self.slice_by:
            key = _slice_key(sample.metadata, name)
            self.slices[name].setdefault(key, GroupTally()).add(ex, verdict.invalid)

    def add_bulk(self, numbers: BulkNumbers) -> None:
        """Count a whole run of plain verdicts at once (the ``add`` of each sample, summed)."""
        self.samples = numbers.samples
        self.passed = numbers.passed
        self.target_errors = numbers.target_errors
        self.weighted = numbers.weighted
        self.latency = numbers.latency
        self.cost.known = numbers.cost_known
        self.cost.priced = numbers.cost_priced
        self.scorers = numbers.scorers
        self.judges = numbers.judges
        self.reasons = numbers.reasons
        self.slices = numbers.slices
        self.epochs = numbers.epochs

    def add_totals(self, totals: CallTotals) -> None:
        """The run's integer sums, as the database computed them."""
        self.tokens.target = TokenTotal(
            totals.target_input_tokens,
            totals.target_output_tokens,
            totals.target_calls,
            totals.target_unreported,
        )
        self.tokens.judges = TokenTotal(
            totals.judge_input_tokens,
            totals.judge_output_tokens,
            totals.judge_calls,
            totals.judge_unreported,
        )
        self.cost.unpriced = totals.unpriced
        self.calls.calls = totals.answered_calls
        self.calls.cached = totals.cached_calls
        self.retries = totals.retries
        self.cached = totals.cached_samples

    def _usage(self, sample: SampleRecord) -> None:
        if sample.latency_s is not None:  # a cached answer's is its original call's
            self.latency.append(float(sample.latency_s))
        self.tokens.add(sample)
        self.cost.add(sample)
        self.calls.add(sample)
        self.retries += sample.retries
        self.cached += sample.cached

    def _scorers(self, sample: SampleRecord, invalid: bool) -> None:
        for name, score in sample.scores.items():
            column = self.scorers.setdefault(name, ColumnTally("scorer"))
            if score.not_applicable and invalid:  # no word on the scorer: counted apart
                column.invalid += 1
            elif score.not_applicable:
                column.not_applicable += 1
            elif score.value is None or score.error:
                column.errors += 1
            else:
                column.values.append(float(score.value))
            if "parse_failures" in score.metadata:
                self.judges.setdefault(name, JudgeTally()).add(score.metadata, score.malformed)

    def _graded(self, ex: ExampleNumbers, detail: WorkflowDetail | None) -> None:
        self.graded = True
        if ex.grade is not None:
            self.grades[ex.grade] += 1
        for gate, ok in ex.gates.items():
            counts = self.gates.setdefault(gate, [0, 0])
            counts[0] += not ok
            counts[1] += 1
        for name, c in ex.criteria.items():
            column = self.criteria.setdefault(name, ColumnTally("criterion"))
            column.values.append(c.normalized)
            if c.floor is not None:
                column.floor = c.floor
            column.floor_violations += c.floor_passed is False
        coverage = detail.coverage if detail is not None else None
        if coverage is not None and coverage.share is not None and ex.weighted_score is not None:
            self.coverage.append(coverage.share)
            self.unscored.update(coverage.unscored)
        for name in detail.missing_criteria if detail is not None else ():
            self.criteria.setdefault(name, ColumnTally("criterion")).errors += 1
        workflow = (detail.workflow if detail is not None else None) or self.workflow
        if workflow is not None:
            self.workflows.setdefault(str(workflow), GroupTally()).add(ex)
        for agent, entry in (detail.agents if detail is not None else {}).items():
            self.agents.setdefault(agent, AgentTally()).add(entry)

    def report(
        self,
        row: RunRow,
        confidence: float,
        n_resamples: int,
        seed: int | None,
        intervals: IntervalPolicy,
    ) -> RunReport:
        graded = self.graded
        # A scorer that feeds a graded criterion of the same name is listed once, as the
        # criterion: the two would show the same normalized values.
        scorers = {k: v for k, v in self.scorers.items() if k not in self.criteria}
        columns = [*self.criteria.items(), *scorers.items()]
        # one bootstrap pass for the weighted score and every column: with one seed, columns
        # of the same length share their resample indices
        blocks = _mean_blocks(
            [self.weighted, *(c.values for _, c in columns)],
            [100.0, *(1.0 for _ in columns)],  # the weighted score is on 0..100
            confidence, n_resamples, seed, intervals,
        )  # fmt: skip
        return RunReport(
            run=run_header(row),
            samples=self.samples,
            target_errors=self.target_errors,
            graded=graded,
            pass_rate=_left_out(
                pass_rate(self.passed, self.samples - self.invalid, confidence), self.invalid
            ),
            weighted_score=self._with_coverage(blocks[0]),
            grades=grade_counts(self.grades) if graded else None,
            gates=self._gate_rows(confidence),
            criteria=self._criterion_rows(columns, blocks[1:]),
            failure_reasons=self.reasons.top(),
            judges={k: j.to_dict(JUDGE_WARNING_RATE) for k, j in sorted(self.judges.items())},
            latency=_latency(self.latency),
            tokens=self.tokens.to_dict(),
            cost=self.cost.total,
            retries=self.retries,
            cached=self.cached,
            cache=self.calls.to_dict(),
            groups=self._groups(graded, confidence),
            warnings=self._warnings(row),
            epochs=epochs_section(row.metrics or {}, self.epochs),
            minimums=minimums_section(row.metrics or {}),
            low_coverage=[c.to_dict() for c in self._low_coverage(scorers)],
        )

    def _with_coverage(self, block: dict[str, Any] | None) -> dict[str, Any] | None:
        """The weighted score's block, with ``coverage`` when some graded sample's score stands
        on part of its profile's weights (criteria without a score are left out of it)."""
        if not self.coverage:
            return block
        n = len(self.coverage)
        mean = sum(self.coverage) / n
        return coverage_block(block, n, mean, min(self.coverage), self.unscored)

    def _low_coverage(self, scorers: Mapping[str, ColumnTally]) -> list[ScorerCoverage]:
        counts = {
            name: {
                "count": len(column.values),
                "errors": column.errors,
                "not_applicable": column.not_applicable,
            }
            for name, column in scorers.items()
        }
        return low_coverage(counts)

    def _gate_rows(self, confidence: float) -> list[dict[str, Any]]:
        return gate_rows(((name, f, n) for name, (f, n) in self.gates.items()), confidence)

    def _criterion_rows(
        self,
        columns: list[tuple[str, ColumnTally]],
        blocks: list[dict[str, Any] | None],
    ) -> list[dict[str, Any]]:
        return [
            column_row(
                name,
                column.kind,
                samples=self.samples,
                n=len(column.values),
                errors=column.errors,
                not_applicable=column.not_applicable,
                block=block,
                quantiles=quantiles(column.values),
                histogram=histogram(column.values, bins=10, range=(0.0, 1.0)),
                floor=column.floor,
                floor_violations=column.floor_violations,
                invalid=column.invalid,
            )
            for (name, column), block in zip(columns, blocks, strict=True)
        ]

    def _groups(self, graded: bool, confidence: float) -> dict[str, Any]:
        return {
            "workflow": [
                g.to_dict(key, graded, confidence) for key, g in sorted(self.workflows.items())
            ],
            "slices": {
                name: [
                    g.to_dict(key, graded, confidence)
                    for key, g in sorted(groups.items(), key=lambda kv: (-kv[1].samples, kv[0]))
                ]
                for name, groups in self.slices.items()
            },
            "agents": [a.to_dict(name) for name, a in sorted(self.agents.items())],
        }

    def _warnings(self, row: RunRow) -> list[str]:
        return run_warnings(
            row,
            samples=self.samples,
            weighted_n=len(self.weighted),
            target_errors=self.target_errors,
            scorers=[(k, len(c.values), c.not_applicable) for k, c in self.scorers.items()],
            judges=self.judges,
            judge_rate=JUDGE_WARNING_RATE,
            invalid=self.invalid,
        )


def _mean_blocks(
    columns: list[list[float]],
    scales: list[float],
    confidence: float,
    n_resamples: int,
    seed: int | None,
    intervals: IntervalPolicy,
) -> list[dict[str, Any] | None]:
    """Mean, std, interval and its method of each column (``None`` for an empty one): the
    bootstrap below ``intervals.bootstrap_max_n`` values, closed forms at or above it (a column
    of 0s and ``scale``s is a rate: Wilson; else Student's t)."""
    # columns of one length share a bootstrap stream, and the closed-form ones are all at
    # least bootstrap_max_n long: leaving them out changes no other column's resamples
    resampled = [v for v in columns if v and not intervals.closed_form(len(v))]
    cis = iter(
        bootstrap_mean_cis(resampled, confidence=confidence, n_resamples=n_resamples, seed=seed)
    )
    blocks: list[dict[str, Any] | None] = []
    for values, scale in zip(columns, scales, strict=True):
        if not values:
            blocks.append(None)
        elif intervals.closed_form(len(values)):
            data = np.asarray(values, dtype=float)
            mean, sd, ones = float(np.mean(data)), sample_std(data), rate_successes(data, scale)
            blocks.append(closed_form_block(data.size, mean, sd, ones, confidence, scale=scale))
        else:
            ci = next(cis)
            blocks.append(
                {
                    "mean": ci.estimate,
                    "std": sample_std(values),
                    "low": ci.low,
                    "high": ci.high,
                    "n": len(values),
                    "method": BOOTSTRAP,
                }
            )
    return blocks


def _latency(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "p50": None, "p95": None, "max": None}
    data = np.asarray(values)
    p50, p95 = np.quantile(data, [0.5, 0.95])
    return {
        "mean": float(data.mean()),
        "p50": float(p50),
        "p95": float(p95),
        "max": float(data.max()),
    }


def _slice_key(metadata: Mapping[str, Any], path: str) -> str:
    value: Any = metadata
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return MISSING
        value = value[part]
    if value is None:
        return MISSING
    return value if isinstance(value, str) else str(value)
