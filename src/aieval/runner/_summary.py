"""The run summary: one frozen typed object, and its stored JSON shape.

The aggregator builds a :class:`RunSummary` as a run ends; the store keeps its :meth:`to_dict`
(the run's ``metrics``), and every reader takes its attributes. A summary read back from the
store is data: :meth:`RunSummary.from_dict` builds one from any stored shape, older ones
included (a field a summary of its day did not hold reads as absent, never as a crash).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self, TypeVar

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

_T = TypeVar("_T")


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return value


def _int(value: Any) -> int:
    number = _num(value)
    return int(number) if number is not None else 0


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _numbers(value: Any) -> dict[str, float]:
    """A stored ``{name: number}``; an entry that is no number is left out."""
    read = {str(k): _num(v) for k, v in _map(value).items()}
    return {k: v for k, v in read.items() if v is not None}


def _counts(value: Any) -> dict[str, int]:
    return {k: int(v) for k, v in _numbers(value).items()}


def _rates(value: Any) -> dict[str, float | None]:
    """``{k: rate}`` where a rate may be ``None`` (pass@k over no example)."""
    return {str(k): _num(v) for k, v in _map(value).items()}


#: How a stored value is read for a field of each declared type (what it lacks reads as
#: absent: a count 0, a figure ``None``).
_READERS: dict[str, Callable[[Any], Any]] = {
    "int": _int,
    "int | None": _opt_int,
    "float": lambda v: float(_num(v) or 0.0),
    "float | None": _num,
    "str": lambda v: "" if v is None else str(v),
    "bool": bool,
}


def _read(cls: type[_T], data: Any, **readers: Callable[[Any], Any]) -> _T:
    """``cls`` from a stored mapping, each field read by its type or by ``readers``."""
    block = _map(data)
    return cls(
        **{
            f.name: readers.get(f.name, _READERS.get(str(f.type), lambda v: v))(block.get(f.name))
            for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        }
    )


def _plain(value: Any) -> Any:
    """A field's JSON value: a part's ``to_dict()``, a tuple as a list, a dict copied."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _as_dict(part: Any, *, skip_none: tuple[str, ...] = ()) -> dict[str, Any]:
    """A part's fields in order, as JSON (those in ``skip_none`` left out when ``None``)."""
    return {
        f.name: _plain(getattr(part, f.name))
        for f in dataclasses.fields(part)
        if not (f.name in skip_none and getattr(part, f.name) is None)
    }


def _optional(reader: Callable[[Any], _T]) -> Callable[[Any], _T | None]:
    """A reader of a part a summary may lack (``None`` when not a non-empty mapping)."""
    return lambda v: reader(v) if isinstance(v, Mapping) and v else None


class _Part:
    """A part of the summary: its JSON is its fields in order (those in ``_omitted_when_none``
    left out when ``None``), read back field by field, by type or by ``_readers``."""

    __slots__ = ()
    #: readers of the fields whose declared type alone does not say how to read them
    _readers: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}
    _omitted_when_none: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        return _as_dict(self, skip_none=self._omitted_when_none)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """The part from its stored JSON, of any age: what it lacks reads as absent."""
        return _read(cls, data, **cls._readers)


@dataclass(frozen=True, slots=True)
class ScorerSummary(_Part):
    """One scorer over a run (``mean`` and ``std`` over the samples it scored).

    ``errors`` counts failed scores, ``missing`` (the samples a failed target left unscored)
    included; ``not_applicable`` the samples it found n/a (``None`` in a summary stored before
    n/a was counted apart). A judge also has ``judged`` (samples it answered), ``malformed``
    and ``malformed_scored`` (see :class:`~aieval.runner.ScorerStats`); a run with invalid
    conversations, ``invalid``: the samples it was n/a on because they were invalid (not in
    ``not_applicable``).
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
    invalid: int = 0

    def to_dict(self) -> dict[str, Any]:
        out = _as_dict(self)
        if not self.judged:  # only a judge's entry has the judge's counts
            for name in ("judged", "malformed", "malformed_scored"):
                del out[name]
        if not self.invalid:  # only a run with invalid conversations has the count
            del out["invalid"]
        return out


@dataclass(frozen=True, slots=True)
class LatencySummary(_Part):
    """Mean, p50, p95 and max latency in seconds of the target calls (``None`` without any)."""

    mean: float | None = None
    p50: float | None = None
    p95: float | None = None
    max: float | None = None


@dataclass(frozen=True, slots=True)
class TopError(_Part):
    """One of a run's most frequent error messages and the samples it hit."""

    message: str
    count: int


@dataclass(frozen=True, slots=True)
class CacheSummary(_Part):
    """Model calls that answered, those served from the cache, and their share."""

    calls: int = 0
    cached: int = 0
    share: float | None = None


@dataclass(frozen=True, slots=True)
class TokenSummary(_Part):
    """Tokens of every model call (``overall``), and of the target and the judges apart
    (``None`` in a summary stored before the split)."""

    overall: TokenTotal
    target: TokenTotal | None = None
    judges: TokenTotal | None = None

    def to_dict(self) -> dict[str, Any]:
        parts = _as_dict(self, skip_none=("target", "judges"))
        del parts["overall"]  # its figures are the block's own: {input, output, total, ...}
        return self.overall.to_dict() | parts

    @classmethod
    def from_dict(cls, data: Any) -> TokenSummary:
        block = _map(data)
        part = _optional(TokenTotal.from_dict)
        return cls(
            TokenTotal.from_dict(block), part(block.get("target")), part(block.get("judges"))
        )


@dataclass(frozen=True, slots=True)
class EpochsSummary(_Part):
    """What a run of ``epochs > 1`` adds: the answers per example (``n``), the examples and
    those with every answer stored, mean pass@k and pass^k by k (``"1"``..``"n"``, over each
    example's valid answers), and each judged scorer's variance split (docs/grading.md,
    "Epochs"); with invalid answers (conversations whose simulated user failed fidelity), how
    many (``invalid``) and the examples left with none valid (``invalid_examples``)."""

    n: int
    examples: int
    complete: int
    pass_at_k: dict[str, float | None] = field(default_factory=dict)
    pass_hat_k: dict[str, float | None] = field(default_factory=dict)
    #: scorer -> its variance split, as :meth:`aieval.stats.VarianceSplit.to_dict` gives it
    variance: dict[str, dict[str, Any]] = field(default_factory=dict)
    invalid: int | None = None
    invalid_examples: int | None = None

    _omitted_when_none = ("invalid", "invalid_examples")
    _readers: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "pass_at_k": _rates,
        "pass_hat_k": _rates,
        "variance": lambda v: {str(k): dict(_map(s)) for k, s in _map(v).items()},
    }


@dataclass(frozen=True, slots=True)
class EfficiencySummary(_Part):
    """A graded workflow run's runtime p50/p95 (and p95 normalised by its SLO) and mean retry
    amplification."""

    runtime_p50_s: float | None = None
    runtime_p95_s: float | None = None
    runtime_p95_norm: float | None = None
    retry_amplification: float | None = None


@dataclass(frozen=True, slots=True)
class EvaluationSummary(_Part):
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

    _readers: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "grades": _counts,
        "gate_failure_rates": _numbers,
        "missing_criteria": _counts,
        "efficiency": EfficiencySummary.from_dict,
    }


@dataclass(frozen=True, slots=True)
class MissedMinimum(_Part):
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


@dataclass(frozen=True, slots=True)
class MinimumCheck(_Part):
    """One minimum the run was held to: its metric, the minimum, the run's value, and whether
    the value met it."""

    metric: str
    minimum: float
    value: float | None
    met: bool


@dataclass(frozen=True, slots=True)
class MinimumsSummary(_Part):
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
            "checks": _plain(self.checks),
            "missed": _plain(tuple(self.missed)),
        }

    _readers: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "min": _numbers,
        "checks": lambda v: tuple(
            MinimumCheck.from_dict(row) for row in _list(v) if isinstance(row, Mapping)
        ),
    }


def _scorers(value: Any) -> dict[str, ScorerSummary]:
    return {
        str(name): ScorerSummary.from_dict(stats)
        for name, stats in _map(value).items()
        if isinstance(stats, Mapping)  # an unreadable entry is left out
    }


def _top_errors(value: Any) -> tuple[TopError, ...]:
    entries = _list(value)
    return tuple(TopError.from_dict(e) for e in entries if isinstance(e, Mapping))


@dataclass(frozen=True, slots=True)
class RunSummary(_Part):
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
    #: the invalid samples (see :attr:`aieval.core.Verdict.invalid`), left out of the pass
    #: rate; ``None`` when there are none
    invalid: int | None = None
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

    _omitted_when_none = ("invalid", "epochs", "evaluation", "minimums")
    _readers: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "top_errors": _top_errors,
        "scorers": _scorers,
        "latency_s": LatencySummary.from_dict,
        "cache": _optional(CacheSummary.from_dict),
        "tokens": _optional(TokenSummary.from_dict),
        "epochs": _optional(EpochsSummary.from_dict),
        "evaluation": _optional(EvaluationSummary.from_dict),
        "minimums": _optional(MinimumsSummary.from_dict),
    }

    def replace(self, **changes: Any) -> RunSummary:
        """A copy with ``changes`` (e.g. ``minimums=...``)."""
        return dataclasses.replace(self, **changes)

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
