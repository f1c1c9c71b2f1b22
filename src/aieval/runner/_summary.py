"""The run summary: one frozen typed object, and its stored JSON shape.

The aggregator builds a :class:`RunSummary` as a run ends; the store keeps its :meth:`to_dict`
(the run's ``metrics``), and every reader takes its attributes. A summary read back from the
store is data: :meth:`RunSummary.from_dict` builds one from any stored shape, older ones
included (a field a summary of its day did not hold reads as absent, never as a crash).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from aieval._usage_figures import TokenTotal

__all__ = [
    "CacheSummary",
    "EfficiencySummary",
    "EpochsSummary",
    "EvaluationSummary",
    "LatencySummary",
    "MinimumCheck",
    "MinimumsSummary",
    "MissedMinimum",
    "RunSummary",
    "ScorerSummary",
    "TokenSummary",
    "TopError",
]

#: The metric name of ``min_pass_rate`` in a :class:`MissedMinimum`.
PASS_RATE = "pass_rate"


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any) -> int:
    number = _num(value)
    return int(number) if number is not None else 0


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return value


def _numbers(value: Any) -> dict[str, float | None]:
    """A stored ``{name: number}``; an entry that is no number reads as ``None``."""
    return {str(k): _num(v) for k, v in _map(value).items()}


@dataclass(frozen=True, slots=True)
class ScorerSummary:
    """One scorer over a run (``mean`` and ``std`` over the samples it scored).

    ``errors`` counts failed scores, ``missing`` (the samples a failed target left unscored)
    included; ``not_applicable`` the samples it found n/a (``None`` in a summary stored before
    n/a was counted apart). A judge also has ``judged`` (samples it answered), ``malformed``
    and ``malformed_scored`` (see :class:`~aieval.runner.ScorerStats`).
    """

    mean: float | None
    std: float | None
    count: int
    errors: int
    missing: int = 0
    not_applicable: int | None = 0
    judged: int = 0
    malformed: int = 0
    malformed_scored: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "mean": self.mean,
            "std": self.std,
            "count": self.count,
            "errors": self.errors,
            "missing": self.missing,
            "not_applicable": self.not_applicable,
        }
        if self.judged:
            out |= {
                "judged": self.judged,
                "malformed": self.malformed,
                "malformed_scored": self.malformed_scored,
            }
        return out

    @classmethod
    def from_dict(cls, data: Any) -> ScorerSummary:
        block = _map(data)
        return cls(
            mean=_num(block.get("mean")),
            std=_num(block.get("std")),
            count=_int(block.get("count")),
            errors=_int(block.get("errors")),
            missing=_int(block.get("missing")),
            not_applicable=_opt_int(block.get("not_applicable")),
            judged=_int(block.get("judged")),
            malformed=_int(block.get("malformed")),
            malformed_scored=_int(block.get("malformed_scored")),
        )


@dataclass(frozen=True, slots=True)
class LatencySummary:
    """Mean, p50, p95 and max latency in seconds of the target calls (``None`` without any)."""

    mean: float | None = None
    p50: float | None = None
    p95: float | None = None
    max: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        return {"mean": self.mean, "p50": self.p50, "p95": self.p95, "max": self.max}

    @classmethod
    def from_dict(cls, data: Any) -> LatencySummary:
        block = _map(data)
        return cls(*(_num(block.get(k)) for k in ("mean", "p50", "p95", "max")))


@dataclass(frozen=True, slots=True)
class TopError:
    """One of a run's most frequent error messages and the samples it hit."""

    message: str
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"message": self.message, "count": self.count}


@dataclass(frozen=True, slots=True)
class CacheSummary:
    """Model calls that answered, those served from the cache, and their share."""

    calls: int = 0
    cached: int = 0
    share: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "cached": self.cached, "share": self.share}

    @classmethod
    def from_dict(cls, data: Any) -> CacheSummary | None:
        if not isinstance(data, Mapping):
            return None
        return cls(_int(data.get("calls")), _int(data.get("cached")), _num(data.get("share")))


@dataclass(frozen=True, slots=True)
class TokenSummary:
    """Tokens of every model call (``overall``), and of the target and the judges apart
    (``None`` in a summary stored before the split)."""

    overall: TokenTotal
    target: TokenTotal | None = None
    judges: TokenTotal | None = None

    def to_dict(self) -> dict[str, Any]:
        out = self.overall.to_dict()
        if self.target is not None:
            out["target"] = self.target.to_dict()
        if self.judges is not None:
            out["judges"] = self.judges.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Any) -> TokenSummary | None:
        if not isinstance(data, Mapping):
            return None
        target, judges = data.get("target"), data.get("judges")
        return cls(
            TokenTotal.from_dict(data),
            None if target is None else TokenTotal.from_dict(target),
            None if judges is None else TokenTotal.from_dict(judges),
        )


@dataclass(frozen=True, slots=True)
class EpochsSummary:
    """What a run of ``epochs > 1`` adds: the answers per example (``n``), the examples and
    those with every answer stored, mean pass@k and pass^k by k (``"1"``..``"n"``), and each
    judged scorer's variance split (docs/grading.md, "Epochs")."""

    n: int
    examples: int
    complete: int
    pass_at_k: dict[str, float | None] = field(default_factory=dict)
    pass_hat_k: dict[str, float | None] = field(default_factory=dict)
    #: scorer -> its variance split, as :meth:`aieval.stats.VarianceSplit.to_dict` gives it
    variance: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "examples": self.examples,
            "complete": self.complete,
            "pass_at_k": dict(self.pass_at_k),
            "pass_hat_k": dict(self.pass_hat_k),
            "variance": {name: dict(split) for name, split in self.variance.items()},
        }

    @classmethod
    def from_dict(cls, data: Any) -> EpochsSummary | None:
        if not isinstance(data, Mapping) or not data:
            return None
        return cls(
            n=_int(data.get("n")),
            examples=_int(data.get("examples")),
            complete=_int(data.get("complete")),
            pass_at_k=_numbers(data.get("pass_at_k")),
            pass_hat_k=_numbers(data.get("pass_hat_k")),
            variance={str(k): dict(_map(v)) for k, v in _map(data.get("variance")).items()},
        )


@dataclass(frozen=True, slots=True)
class EfficiencySummary:
    """A graded workflow run's runtime p50/p95 (and p95 normalised by its SLO) and mean retry
    amplification."""

    runtime_p50_s: float | None = None
    runtime_p95_s: float | None = None
    runtime_p95_norm: float | None = None
    retry_amplification: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        return {
            "runtime_p50_s": self.runtime_p50_s,
            "runtime_p95_s": self.runtime_p95_s,
            "runtime_p95_norm": self.runtime_p95_norm,
            "retry_amplification": self.retry_amplification,
        }

    @classmethod
    def from_dict(cls, data: Any) -> EfficiencySummary:
        block = _map(data)
        return cls(
            *(
                _num(block.get(k))
                for k in (
                    "runtime_p50_s",
                    "runtime_p95_s",
                    "runtime_p95_norm",
                    "retry_amplification",
                )
            )
        )


@dataclass(frozen=True, slots=True)
class EvaluationSummary:
    """What a graded workflow run adds: the runs graded and passed, the grade distribution,
    each hard gate's failure rate, the criteria missing and how many runs missed each, and
    the efficiency figures."""

    runs: int = 0
    passed: int = 0
    pass_rate: float | None = None
    grades: dict[str, int] = field(default_factory=dict)
    gate_failure_rates: dict[str, float] = field(default_factory=dict)
    missing_criteria: dict[str, int] = field(default_factory=dict)
    efficiency: EfficiencySummary = field(default_factory=EfficiencySummary)

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "grades": dict(self.grades),
            "gate_failure_rates": dict(self.gate_failure_rates),
            "missing_criteria": dict(self.missing_criteria),
            "efficiency": self.efficiency.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any) -> EvaluationSummary | None:
        if not isinstance(data, Mapping):
            return None
        return cls(
            runs=_int(data.get("runs")),
            passed=_int(data.get("passed")),
            pass_rate=_num(data.get("pass_rate")),
            grades={k: int(v) for k, v in _numbers(data.get("grades")).items() if v is not None},
            gate_failure_rates={
                k: v for k, v in _numbers(data.get("gate_failure_rates")).items() if v is not None
            },
            missing_criteria={
                k: int(v)
                for k, v in _numbers(data.get("missing_criteria")).items()
                if v is not None
            },
            efficiency=EfficiencySummary.from_dict(data.get("efficiency")),
        )


@dataclass(frozen=True, slots=True)
class MissedMinimum:
    """One minimum a run did not reach.

    Attributes:
        metric: ``"pass_rate"``, or the scorer whose mean score was below its minimum.
        minimum: the least value asked for (0..1).
        value: the run's value; ``None`` when it has none (nothing passed or scored).
    """

    metric: str
    minimum: float
    value: float | None

    def __str__(self) -> str:
        what = "pass rate" if self.metric == PASS_RATE else f"{self.metric} mean score"
        if self.value is None:
            return f"{what}: none (nothing scored), minimum {self.minimum:g}"
        return f"{what} {self.value:.4g} below its minimum {self.minimum:g}"

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "minimum": self.minimum, "value": self.value}


@dataclass(frozen=True, slots=True)
class MinimumCheck:
    """One minimum the run was held to: its metric, the minimum, the run's value, and whether
    the value met it."""

    metric: str
    minimum: float
    value: float | None
    met: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "minimum": self.minimum,
            "value": self.value,
            "met": self.met,
        }


@dataclass(frozen=True, slots=True)
class MinimumsSummary:
    """The minimums a run was held to (``min_pass_rate``, ``min``) and each one's check."""

    min_pass_rate: float | None
    min: dict[str, float]
    checks: tuple[MinimumCheck, ...]

    @property
    def met(self) -> bool:
        """Whether the run met every minimum."""
        return all(check.met for check in self.checks)

    @property
    def missed(self) -> list[MissedMinimum]:
        """The minimums the run did not reach, in order."""
        return [MissedMinimum(c.metric, c.minimum, c.value) for c in self.checks if not c.met]

    def to_dict(self) -> dict[str, Any]:
        return {
            "min_pass_rate": self.min_pass_rate,
            "min": dict(self.min),
            "met": self.met,
            "checks": [check.to_dict() for check in self.checks],
            "missed": [missed.to_dict() for missed in self.missed],
        }

    @classmethod
    def from_dict(cls, data: Any) -> MinimumsSummary | None:
        if not isinstance(data, Mapping) or not data:
            return None
        checks = tuple(
            MinimumCheck(
                str(row.get("metric")),
                float(_num(row.get("minimum")) or 0.0),
                _num(row.get("value")),
                bool(row.get("met")),
            )
            for row in data.get("checks") or []
            if isinstance(row, Mapping)
        )
        floors = {str(k): float(v) for k, v in _map(data.get("min")).items() if _num(v) is not None}
        return cls(_num(data.get("min_pass_rate")), floors, checks)


@dataclass(frozen=True, slots=True)
class RunSummary:
    """A run's numbers, over its stored samples: counts, pass and error rates, the most
    frequent errors, per-scorer figures, latency, retries, cache, tokens and cost, and, when
    the run has them, its epochs, its workflow evaluation and its minimums.

    Read its attributes (``result.summary.samples``, ``result.summary.scorers["exact"].mean``);
    :meth:`to_dict` gives the JSON stored with the run and printed by ``aieval run --json``.
    Reading it by key (``summary["samples"]``) still works for now, with a
    :class:`DeprecationWarning`.
    """

    samples: int = 0
    passed: int = 0
    unscored: int = 0
    pass_rate: float | None = None
    target_errors: int = 0
    errored_samples: int = 0
    error_rate: float | None = None
    top_errors: tuple[TopError, ...] = ()
    scorers: dict[str, ScorerSummary] = field(default_factory=dict)
    latency_s: LatencySummary = field(default_factory=LatencySummary)
    retries: int = 0
    cached: int = 0
    cache: CacheSummary | None = None
    #: the total input and output tokens (``None`` when a call did not report its tokens)
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens: TokenSummary | None = None
    #: USD; ``None`` when unknown (a sample whose model has no price)
    cost: float | None = None
    unpriced_samples: int = 0
    epochs: EpochsSummary | None = None
    evaluation: EvaluationSummary | None = None
    minimums: MinimumsSummary | None = None

    def replace(self, **changes: Any) -> RunSummary:
        """A copy with ``changes`` (e.g. ``minimums=...``)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The summary's JSON shape, as stored with the run."""
        out: dict[str, Any] = {
            "samples": self.samples,
            "passed": self.passed,
            "unscored": self.unscored,
            "pass_rate": self.pass_rate,
            "target_errors": self.target_errors,
            "errored_samples": self.errored_samples,
            "error_rate": self.error_rate,
            "top_errors": [entry.to_dict() for entry in self.top_errors],
            "scorers": {name: stats.to_dict() for name, stats in self.scorers.items()},
            "latency_s": self.latency_s.to_dict(),
            "retries": self.retries,
            "cached": self.cached,
            "cache": None if self.cache is None else self.cache.to_dict(),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "tokens": None if self.tokens is None else self.tokens.to_dict(),
            "cost": self.cost,
            "unpriced_samples": self.unpriced_samples,
        }
        if self.epochs is not None:
            out["epochs"] = self.epochs.to_dict()
        if self.evaluation is not None:
            out["evaluation"] = self.evaluation.to_dict()
        if self.minimums is not None:
            out["minimums"] = self.minimums.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Any) -> RunSummary:
        """A summary from its stored JSON, of any age; what it lacks reads as absent (zero
        counts, ``None`` figures)."""
        block = _map(data)
        top = [e for e in block.get("top_errors") or [] if isinstance(e, Mapping)]
        return cls(
            samples=_int(block.get("samples")),
            passed=_int(block.get("passed")),
            unscored=_int(block.get("unscored")),
            pass_rate=_num(block.get("pass_rate")),
            target_errors=_int(block.get("target_errors")),
            errored_samples=_int(block.get("errored_samples")),
            error_rate=_num(block.get("error_rate")),
            top_errors=tuple(TopError(str(e.get("message")), _int(e.get("count"))) for e in top),
            scorers={
                str(name): ScorerSummary.from_dict(stats)
                for name, stats in _map(block.get("scorers")).items()
                if isinstance(stats, Mapping)
            },
            latency_s=LatencySummary.from_dict(block.get("latency_s")),
            retries=_int(block.get("retries")),
            cached=_int(block.get("cached")),
            cache=CacheSummary.from_dict(block.get("cache")),
            input_tokens=_opt_int(block.get("input_tokens")),
            output_tokens=_opt_int(block.get("output_tokens")),
            tokens=TokenSummary.from_dict(block.get("tokens")),
            cost=_num(block.get("cost")),
            unpriced_samples=_int(block.get("unpriced_samples")),
            epochs=EpochsSummary.from_dict(block.get("epochs")),
            evaluation=EvaluationSummary.from_dict(block.get("evaluation")),
            minimums=MinimumsSummary.from_dict(block.get("minimums")),
        )

    # Reading by key, as when the summary was a dict: kept for users' code, with a warning.

    def __getitem__(self, key: str) -> Any:
        _warn_key(key)
        return self.to_dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        """Deprecated: read the attribute instead."""
        _warn_key(key)
        return self.to_dict().get(key, default)

    def __contains__(self, key: object) -> bool:
        _warn_key(str(key))
        return key in self.to_dict()

    def keys(self) -> Iterator[str]:
        """Deprecated: the keys of :meth:`to_dict`."""
        _warn_key("keys()")
        return iter(self.to_dict())


def _warn_key(key: str) -> None:
    warnings.warn(
        f"reading the run summary by key ({key!r}) is deprecated: read its attribute"
        " (e.g. result.summary.samples), or use result.summary.to_dict()",
        DeprecationWarning,
        stacklevel=3,
    )
