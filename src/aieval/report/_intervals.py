"""Which method draws an interval, by size: the one setting reports, comparisons and the
promotion policy share, and a report block computed from a column's moments.

Below ``bootstrap_max_n`` values (samples in a report column, paired examples in a
comparison) every interval is the seeded bootstrap, as it always was; at or above it, with
``interval_method: auto``, a mean's is Student's t, a 0/1 rate's Wilson's, a comparison's
paired delta the paired t interval (0/1 metrics: Tango's paired-proportion score interval) and
the continuous non-inferiority test the paired t-test. ``interval_method: bootstrap`` keeps the
bootstrap at any size. Why: ``docs/reports.md``, "Intervals by size".
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aieval._keys import field_problems
from aieval.errors import ConfigError
from aieval.stats import moments_from_sums, t_interval_from_moments, wilson_interval

__all__ = [
    "BOOTSTRAP",
    "DEFAULT_BOOTSTRAP_MAX_N",
    "STUDENT_T",
    "WILSON",
    "BootstrapMaxN",
    "IntervalMethod",
    "IntervalPolicy",
    "closed_form_block",
    "closed_form_block_from_sums",
    "rate_successes",
]

#: ``auto``: the closed forms at or above ``bootstrap_max_n`` values; ``bootstrap``: the
#: seeded bootstrap at any size.
IntervalMethod = Literal["auto", "bootstrap"]

#: Values from which ``auto`` draws closed-form intervals: 20,000 samples (or paired examples).
DEFAULT_BOOTSTRAP_MAX_N = 20_000

#: ``bootstrap_max_n``'s type, wherever it is a field: a whole number, at least 1.
BootstrapMaxN = Annotated[int, Field(strict=True, ge=1)]

#: The ``method`` of a report's intervals, as every format shows it.
BOOTSTRAP = "percentile bootstrap"
STUDENT_T = "Student t"
WILSON = "Wilson score"


class IntervalPolicy(BaseModel):
    """How intervals are drawn, by size (the ``interval_method`` and ``bootstrap_max_n`` of
    ``build_report``, ``compare_runs`` and :class:`~aieval.report.PromotionPolicy`).

    Example:
        >>> policy = IntervalPolicy(bootstrap_max_n=100)
        >>> policy.closed_form(99), policy.closed_form(100)
        (False, True)
        >>> IntervalPolicy(interval_method="bootstrap", bootstrap_max_n=100).closed_form(10**6)
        False
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    interval_method: IntervalMethod = "auto"
    """``auto``: closed forms at or above ``bootstrap_max_n`` values; ``bootstrap``: the
    seeded bootstrap at any size."""

    bootstrap_max_n: BootstrapMaxN = DEFAULT_BOOTSTRAP_MAX_N
    """The size (samples in a report column, paired examples in a comparison) from which
    ``auto`` uses closed forms."""

    @classmethod
    def of(
        cls, interval_method: str = "auto", bootstrap_max_n: int = DEFAULT_BOOTSTRAP_MAX_N
    ) -> IntervalPolicy:
        """The policy of these two settings, a :class:`ConfigError` naming the bad one."""
        try:
            return cls.model_validate(
                {"interval_method": interval_method, "bootstrap_max_n": bootstrap_max_n}
            )
        except ValidationError as exc:
            raise ConfigError(f"invalid interval settings: {field_problems(exc)}") from exc

    def closed_form(self, n: int) -> bool:
        """Whether an interval over ``n`` values is drawn in closed form."""
        return self.interval_method == "auto" and n >= self.bootstrap_max_n


def rate_successes(values: np.ndarray, one: float = 1.0) -> int | None:
    """The count of ``one`` values when every value is 0 or ``one`` (a rate), else ``None``.

    Example:
        >>> rate_successes(np.array([0.0, 1.0, 1.0])), rate_successes(np.array([0.0, 0.5]))
        (2, None)
    """
    ones = int(np.count_nonzero(values == one))
    return ones if ones + int(np.count_nonzero(values == 0.0)) == values.size else None


def closed_form_block(
    n: int,
    mean: float,
    sd: float | None,
    successes: int | None,
    confidence: float,
    *,
    scale: float = 1.0,
) -> dict[str, Any]:
    """A report's interval block (``mean``, ``std``, ``low``, ``high``, ``n``, ``method``) of a
    column of ``n`` values from its moments: Wilson's interval when the column is a rate
    (``successes`` values of ``scale``, the rest 0; bounds times ``scale``), else Student's t.

    Takes numbers only, so a caller with sums from a database builds the same block.
    """
    if successes is not None:
        ci = wilson_interval(successes, n, confidence=confidence)
        low, high, method = ci.low * scale, ci.high * scale, WILSON
    else:
        t = t_interval_from_moments(n, mean, sd or 0.0, confidence=confidence)
        low, high, method = t.low, t.high, STUDENT_T
    return {"mean": mean, "std": sd, "low": low, "high": high, "n": n, "method": method}


def closed_form_block_from_sums(
    n: int,
    total: float,
    total_sq: float,
    successes: int | None,
    confidence: float,
    *,
    scale: float = 1.0,
    shift: float = 0.0,
) -> dict[str, Any]:
    """:func:`closed_form_block` of a column given as ``n``, ``SUM(x - shift)`` and
    ``SUM((x - shift)²)`` (what a database adds up), with the mean and sd those give
    (:func:`~aieval.stats.moments_from_sums`; ``std`` is ``None`` for one value, as the
    array path's)."""
    mean, sd = moments_from_sums(n, total, total_sq, shift=shift)
    return closed_form_block(n, mean, sd if n > 1 else None, successes, confidence, scale=scale)
