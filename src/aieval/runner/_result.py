"""A run's result and the streaming aggregation that builds it."""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from aieval._floors import at_most
from aieval._records import SampleRecord
from aieval._usage_figures import CacheTally, CostTally, TokenTally
from aieval.core import ROW_CHECK_PREFIX, ScorerCoverage, SettingChange, low_coverage
from aieval.runner._summary import (
    CacheSummary,
    LatencySummary,
    MissedMinimum,
    RunSummary,
    ScorerSummary,
    TokenSummary,
    TopError,
)

if TYPE_CHECKING:
    from aieval.runner._epochs import EpochTally
    from aieval.store import PlainSamples, Store

__all__ = ["Aggregator", "RunResult", "ScorerStats"]

#: Error messages shown in a summary (the most frequent first).
TOP_ERRORS = 5
#: Distinct messages counted; rarer ones beyond this are counted under one "other errors" line.
_MAX_DISTINCT = 1000
_MAX_MESSAGE = 300
_OTHER = "(other errors)"


@dataclass(slots=True)
class ScorerStats:
    """Summary of one scorer over a run (``mean`` over scored samples only).

    ``errors`` counts failed scores: the scorer's own failures plus ``missing``, the samples it
    has no score for because their target failed. ``not_applicable`` counts the samples it
    returned no value for without an error (``Score(None)``: "n/a"), which are no error, so that
    ``count + errors + not_applicable`` is the number of samples. For a judge, ``judged`` counts
    the samples it answered and ``malformed`` those whose score rests on malformed verdicts:
    their value (0.0, a tie for a pairwise judge) is in ``count`` and the mean, and each sample
    also counts as errored in the run's error budget. A store written before malformed scores
    kept their value holds them as errors (value None); they are counted in ``malformed`` all
    the same, and ``malformed_scored`` counts only those that kept their value (not in
    ``errors``). ``invalid`` counts the samples of invalid conversations (their simulated
    user failed fidelity): the scorer's n/a there says nothing about the scorer, so they are
    counted apart, out of ``not_applicable`` and its coverage.
    """

    name: str
    count: int = 0
    errors: int = 0
    missing: int = 0
    not_applicable: int = 0
    total: float = 0.0
    total_sq: float = 0.0
    judged: int = 0
    malformed: int = 0
    malformed_scored: int = 0
    invalid: int = 0

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    @property
    def std(self) -> float | None:
        if self.count < 2:
            return None
        variance = (self.total_sq - self.total * self.total / self.count) / (self.count - 1)
        return math.sqrt(max(variance, 0.0))

    def to_summary(self) -> ScorerSummary:
        """The scorer's figures as the run summary holds them (``errors`` with ``missing``)."""
        return ScorerSummary(
            mean=self.mean,
            std=self.std,
            count=self.count,
            errors=self.errors + self.missing,
            missing=self.missing,
            not_applicable=self.not_applicable,
            judged=self.judged,
            malformed=self.malformed,
            malformed_scored=self.malformed_scored,
            invalid=self.invalid,
        )

    def to_dict(self) -> dict[str, Any]:
        return self.to_summary().to_dict()


class Aggregator:
    """Folds finished samples into run-level numbers in O(scorers) memory plus one float/sample."""

    def __init__(self, scorer_names: Sequence[str]) -> None:
        self.scorers = {name: ScorerStats(name) for name in scorer_names}
        self.count = 0
        self.passed = 0
        self.unscored = 0
        #: invalid samples (see :attr:`Verdict.invalid`): out of the pass rate
        self.invalid = 0
        self.target_errors = 0
        self.retries = 0
        self.cached = 0
        self.tokens = TokenTally()
        self.costs = CostTally()
        self.calls = CacheTally()
        self.latencies = array("d")
        self.errored = 0
        self.messages: Counter[str] = Counter()
        #: set for a run of ``epochs > 1``: its pass@k, pass^k and variance split
        self.epochs: EpochTally | None = None

    def add(self, sample: SampleRecord) -> None:
        self.count += 1
        if self.epochs is not None:
            self.epochs.add(sample)
        self.passed += bool(sample.passed)
        invalid = sample.verdict is not None and sample.verdict.invalid
        self.invalid += invalid
        self.unscored += sample.unscored and not invalid  # its checks were n/a: counted apart
        self.target_errors += sample.error is not None
        self.retries += sample.retries
        self.cached += sample.cached
        if (
            sample.calls
            or sample.cost is not None
            or sample.input_tokens is not None
            or sample.output_tokens is not None
        ):
            self.tokens.add(sample)
            self.costs.add(sample)
            self.calls.add(sample)
        # else no call, token or cost to count (a recorded row without usage): nothing added
        # a cached answer counts with its original call's latency (kept in the cache)
        if sample.latency_s is not None:
            self.latencies.append(sample.latency_s)
        problems = sample.errors
        if problems:
            self.errored += 1
            for source, message in problems.items():
                self._count_error(f"{source}: {message}")
        for name, score in sample.scores.items():
            stats = self.scorers.get(name)
            if stats is None:
                stats = self.scorers[name] = ScorerStats(name)
            if "parse_failures" in score.metadata:  # a judge answered
                stats.judged += 1
                stats.malformed += score.malformed is not None
                stats.malformed_scored += score.malformed is not None and score.error is None
            if score.error is not None:
                stats.errors += 1
            elif score.value is not None:
                stats.count += 1
                stats.total += score.value
                stats.total_sq += score.value * score.value
            elif invalid:  # n/a because the conversation was invalid: no word on the scorer
                stats.invalid += 1
            else:
                stats.not_applicable += 1
        for name, stats in self.scorers.items():
            # a failed target: nothing was scored (a row's own check counts on its rows only)
            if name not in sample.scores and not name.startswith(ROW_CHECK_PREFIX):
                stats.missing += 1

    def add_plain(self, batch: PlainSamples) -> None:
        """:meth:`add` of each of a batch of plain samples, from its columns (the same sums,
        added in the same order)."""
        n = len(batch)
        assert self.epochs is None, "a run of epochs has no plain samples"
        self.count += n
        self.passed += sum(1 for reasons in batch.reasons if not reasons)
        for name, values in zip(batch.scorers, batch.values, strict=True):
            stats = self.scorers.get(name)
            if stats is None:
                stats = self.scorers[name] = ScorerStats(name)
            total, total_sq = stats.total, stats.total_sq
            for value in values:  # one at a time, as add does: the same float sums
                total += value
                total_sq += value * value
            stats.total, stats.total_sq = total, total_sq
            stats.count += n
        for name, stats in self.scorers.items():
            if name not in batch.scorers and not name.startswith(ROW_CHECK_PREFIX):
                stats.missing += n

    def _count_error(self, message: str) -> None:
        flat = " ".join(message.split())
        if len(flat) > _MAX_MESSAGE:
            flat = flat[: _MAX_MESSAGE - 1] + "…"
        if flat in self.messages or len(self.messages) < _MAX_DISTINCT:
            self.messages[flat] += 1
        else:
            self.messages[_OTHER] += 1

    def summary(self) -> RunSummary:
        tokens = self.tokens
        overall = tokens.overall
        return RunSummary(
            samples=self.count,
            passed=self.passed,
            unscored=self.unscored,
            invalid=self.invalid or None,
            pass_rate=self.passed / valid if (valid := self.count - self.invalid) else None,
            target_errors=self.target_errors,
            errored_samples=self.errored,
            error_rate=self.errored / self.count if self.count else None,
            top_errors=tuple(
                TopError(message, count) for message, count in self.messages.most_common(TOP_ERRORS)
            ),
            scorers={name: stats.to_summary() for name, stats in self.scorers.items()},
            latency_s=_latency(self.latencies),
            retries=self.retries,
            cached=self.cached,
            cache=_cache(self.calls),
            input_tokens=overall.input if overall.complete else None,
            output_tokens=overall.output if overall.complete else None,
            tokens=TokenSummary(overall, replace(tokens.target), replace(tokens.judges)),
            cost=self.costs.total,
            unpriced_samples=self.costs.unpriced,
            epochs=None if self.epochs is None else self.epochs.summary(),
        )


def _cache(calls: CacheTally) -> CacheSummary:
    share = calls.cached / calls.calls if calls.calls else None
    return CacheSummary(calls.calls, calls.cached, share)


def _latency(values: array[float]) -> LatencySummary:
    if not values:
        return LatencySummary()
    ordered = sorted(values)
    return LatencySummary(
        mean=sum(ordered) / len(ordered),
        p50=_quantile(ordered, 0.50),
        p95=_quantile(ordered, 0.95),
        max=ordered[-1],
    )


def _quantile(ordered: list[float], q: float) -> float:
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(slots=True)
class RunResult:
    """What :func:`aieval.run` returns.

    Attributes:
        id: the run id, as stored.
        name: the run name.
        status: ``completed``, ``failed`` or ``interrupted``.
        metrics: ``{scorer name: mean score}`` over the samples that scored.
        pass_rate: share of samples that passed (no error, at least one score, every score
            >= the threshold); unscored samples (every scorer n/a) count as not passed;
            invalid ones (``summary.invalid``: a simulated user that failed fidelity) are left
            out of it.
        summary: a :class:`RunSummary`: counts, per-scorer stats, latency p50/p95, tokens
            (``tokens``: target, judges, total), cost (``None`` when unknown), the share of
            model calls served from the cache (``cache``), retries, errored samples and the
            most frequent error messages; it counts stored samples only.
        duration_s: wall time of this invocation.
        max_error_rate: the share of errored samples this run tolerates (see
            :attr:`error_budget_exceeded`).
        execution_changes: for a resumed run, each execution setting (concurrency, timeout,
            retries, cache, executor) it ran with this time that differs from the one it ran
            with before; the stored run's config now records these.
    """

    id: str
    name: str
    status: str
    model: str | None
    provider: str | None
    dataset_hash: str
    metrics: dict[str, float | None]
    pass_rate: float | None
    summary: RunSummary
    duration_s: float
    max_error_rate: float = 0.0
    execution_changes: list[SettingChange] = field(default_factory=list)
    _store: Store | None = field(default=None, repr=False)
    _samples: list[SampleRecord] | None = field(default=None, repr=False)

    @property
    def samples(self) -> list[SampleRecord]:
        """Per-sample records in dataset order (read from the store when there is one)."""
        if self._samples is not None:
            return self._samples
        if self._store is None:
            return []
        return list(self._store.iter_samples(self.id))

    @property
    def latency(self) -> dict[str, float | None]:
        """Mean, p50, p95 and max latency in seconds of the target calls."""
        return self.summary.latency_s.to_dict()

    @property
    def errors(self) -> int:
        """Number of samples whose target failed plus scorer errors, a judge's malformed
        verdict included (each failure once: the scores a failed target left missing are not
        counted again)."""
        scorer_errors = sum(
            s.errors - s.missing + s.malformed_scored for s in self.summary.scorers.values()
        )
        return self.summary.target_errors + scorer_errors

    @property
    def malformed(self) -> dict[str, tuple[int, int]]:
        """``{judge scorer: (samples whose verdict was malformed, samples it answered)}``.

        Only scorers that recorded judge verdicts appear. A malformed sample keeps its value
        (0.0; a tie for a pairwise judge), which enters the scorer's mean; it never passes the
        pass threshold and counts towards ``errors``, ``error_count`` and ``max_error_rate``.
        """
        return {
            name: (stats.malformed, stats.judged)
            for name, stats in self.summary.scorers.items()
            if stats.judged
        }

    @property
    def error_count(self) -> int:
        """Samples with any error: the target failed, or at least one scorer did."""
        return self.summary.errored_samples

    @property
    def error_rate(self) -> float | None:
        """``error_count`` over the samples of the run (``None`` when it has none)."""
        samples = self.summary.samples
        return self.error_count / samples if samples else None

    @property
    def top_errors(self) -> list[tuple[str, int]]:
        """The most frequent error messages and their counts, most frequent first.

        Each message starts with where it happened: ``target:`` or the scorer's name.
        """
        return [(e.message, e.count) for e in self.summary.top_errors]

    @property
    def error_budget_exceeded(self) -> bool:
        """Whether more samples errored than ``max_error_rate`` allows (any, by default)."""
        rate = self.error_rate
        return rate is not None and not at_most(rate, self.max_error_rate)

    @property
    def not_applicable(self) -> dict[str, int]:
        """``{scorer name: samples it found not applicable}`` ("n/a": ``Score(None)`` with no
        error). These are not errors; a scorer absent from a stored summary counts 0."""
        return {name: stats.not_applicable or 0 for name, stats in self.summary.scorers.items()}

    @property
    def unscored(self) -> int:
        """Samples every scorer found not applicable: they are not passed, and not errored."""
        return self.summary.unscored

    @property
    def unscored_scorers(self) -> list[str]:
        """Scorers that scored no sample and found at least one not applicable (n/a).

        One that failed on every sample has only errors, which :attr:`max_error_rate` governs.
        """
        return [
            name
            for name, stats in self.summary.scorers.items()
            if not stats.count and stats.not_applicable
        ]

    @property
    def scored_samples(self) -> str:
        """The samples a scorer is checked against: ``6``, or ``3 valid (3 invalid (simulated
        user) left out)`` when some conversations were invalid, which no scorer scores."""
        invalid = self.summary.invalid or 0
        if not invalid:
            return f"{self.summary.samples}"
        valid = self.summary.samples - invalid
        return f"{valid} valid ({invalid} invalid (simulated user) left out)"

    @property
    def low_coverage(self) -> list[ScorerCoverage]:
        """Scorers the pass rate says nothing about: each that scored no sample (n/a or
        failed on every one), and each that scored under half its samples, most of the rest
        n/a. ``aieval run`` and the reports name them next to the pass rate."""
        return low_coverage({name: stats.to_dict() for name, stats in self.summary.scorers.items()})

    @property
    def problems(self) -> list[str]:
        """Why the run is not :attr:`ok`, one sentence each (empty when it is)."""
        found: list[str] = []
        if self.status != "completed":
            found.append(f"the run ended {self.status!r}, not 'completed'")
        if self.error_budget_exceeded:
            found.append(
                f"{self.error_count} of {self.summary.samples} samples errored"
                f" (max error rate {self.max_error_rate:.1%})"
            )
        for name in self.unscored_scorers:
            stats = self.summary.scorers[name]
            found.append(
                f"scorer {name!r} scored no sample of {self.scored_samples}"
                f" (n/a {stats.not_applicable or 0}, errors {stats.errors})"
            )
        return found

    @property
    def missed_minimums(self) -> list[MissedMinimum]:
        """The minimums (``min_pass_rate``, ``min_scores``) the run did not reach, each with
        its value and minimum; empty when it reached them all, or had none. Not part of
        :attr:`ok`, which is about the run's health: ``aieval run`` exits 4 for these."""
        minimums = self.summary.minimums
        return [] if minimums is None else minimums.missed

    @property
    def ok(self) -> bool:
        """The run completed, its errored samples are within ``max_error_rate``, and no scorer
        is in :attr:`unscored_scorers` (see :attr:`problems` for why not)."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the run's header and summary."""
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "model": self.model,
            "provider": self.provider,
            "dataset_hash": self.dataset_hash,
            "metrics": self.metrics,
            "pass_rate": self.pass_rate,
            "summary": self.summary.to_dict(),
            "duration_s": self.duration_s,
            "max_error_rate": self.max_error_rate,
            "execution_changes": [c.to_dict() for c in self.execution_changes],
            "error_count": self.error_count,
            "malformed": {k: list(v) for k, v in self.malformed.items()},
            "not_applicable": self.not_applicable,
            "unscored": self.unscored,
            "unscored_scorers": self.unscored_scorers,
            "low_coverage": [c.to_dict() for c in self.low_coverage],
            "ok": self.ok,
            "problems": self.problems,
            "missed_minimums": [m.to_dict() for m in self.missed_minimums],
        }
