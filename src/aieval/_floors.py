"""Whether a metric meets a floor (or stays under a ceiling), float noise aside.

Ten scores of 0.1 average to 0.09999999999999999 in floating point: compared with ``>=``, that
mean misses a floor of 0.1 it meets exactly. Every floor, threshold, minimum, limit and
tolerance in aieval is compared with :func:`at_least` or :func:`at_most`, which accept a value
within ``FLOOR_REL_TOL`` (relative) or ``FLOOR_ABS_TOL`` (absolute, for bounds at 0) of the
bound. That is millions of times the rounding error of a mean or a ratio, and far below any
difference a score can mean: a value below by more than the tolerance still fails.

The module has no dependencies, so grading, the runner and the pytest plugin can use it without
importing the statistics stack; :mod:`aieval.stats` re-exports the two functions.
"""

from __future__ import annotations

import math

__all__ = [
    "DEFAULT_PASS_THRESHOLD",
    "FLOOR_ABS_TOL",
    "FLOOR_REL_TOL",
    "at_least",
    "at_most",
    "shown_apart",
]

#: A run's ``pass_threshold`` when none is given: the setting's one default (``run()``, eval
#: files, the spec, the threshold grader), also read for a stored run whose config has none
#: (every run then used it). Re-exported as ``aieval.core.DEFAULT_PASS_THRESHOLD``.
DEFAULT_PASS_THRESHOLD = 0.5

#: Relative tolerance of a floor comparison: one part in a billion of the larger number.
FLOOR_REL_TOL = 1e-9
#: Absolute tolerance, which decides only for bounds at (or next to) 0.
FLOOR_ABS_TOL = 1e-12


def at_least(value: float, floor: float) -> bool:
    """``value >= floor``, where a value equal to the floor up to float rounding meets it.

    NaN meets no floor.

    >>> sum([0.1] * 10) / 10 >= 0.1, at_least(sum([0.1] * 10) / 10, 0.1)
    (False, True)
    >>> at_least(0.0999, 0.1)
    False
    """
    return value >= floor or _close(value, floor)


def at_most(value: float, ceiling: float) -> bool:
    """``value <= ceiling``, where a value equal to the ceiling up to float rounding is within it.

    NaN is within no ceiling.

    >>> 0.07 - 0.05 <= 0.02, at_most(0.07 - 0.05, 0.02)
    (False, True)
    """
    return value <= ceiling or _close(value, ceiling)


def shown_apart(value: float, bound: float, digits: int = 3) -> tuple[str, str]:
    """``value`` and ``bound`` with ``digits`` decimals, or with as many more as it takes for
    them to read differently (a message never says "0.100 is below 0.100").

    >>> shown_apart(0.0999, 0.1)
    ('0.0999', '0.1000')
    >>> shown_apart(0.25, 0.5)
    ('0.250', '0.500')
    """
    for places in range(digits, 18):
        left, right = f"{value:.{places}f}", f"{bound:.{places}f}"
        if left != right or value == bound:
            return left, right
    return repr(value), repr(bound)


def _close(value: float, bound: float) -> bool:
    return math.isclose(value, bound, rel_tol=FLOOR_REL_TOL, abs_tol=FLOOR_ABS_TOL)
