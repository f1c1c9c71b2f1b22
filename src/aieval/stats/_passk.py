"""The unbiased pass@k estimator of the Codex paper (Chen et al., 2021), and pass^k (every one
of k tries passes) estimated the same way."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from aieval.errors import ConfigError

__all__ = ["mean_pass_at_k", "pass_at_k", "pass_at_k_from_outcomes", "pass_hat_k"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` samples drawn from ``n`` (``c`` correct) passes.

    Computes ``1 - C(n-c, k) / C(n, k)`` as the product ``1 - prod(1 - k/i, i=n-c+1..n)``,
    which stays exact to float precision for large ``n`` where the binomials overflow.

    Args:
        n: samples generated for the problem.
        c: samples among them that passed.
        k: the budget, ``1 <= k <= n``.

    Raises:
        ConfigError: when the counts are negative, ``c > n`` or ``k`` is outside ``1..n``.

    Example:
        >>> round(pass_at_k(n=200, c=13, k=10), 4)
        0.4976
        >>> pass_at_k(n=5, c=0, k=1), pass_at_k(n=5, c=5, k=1)
        (0.0, 1.0)
    """
    _check_counts(n, c, k)
    if n - c < k:
        return 1.0
    survive = 1.0
    for i in range(n - c + 1, n + 1):
        survive *= 1.0 - k / i
    return 1.0 - survive


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all ``k`` samples drawn from ``n`` (``c`` correct) pass: pass^k.

    The unbiased estimate ``C(c, k) / C(n, k)`` (drawing ``k`` of the ``n`` tries without
    replacement), computed as the product ``prod((c - i) / (n - i), i=0..k-1)``. It measures
    reliability where pass@k measures reach: pass^1 equals pass@1, and pass^k falls with ``k``
    unless every try passes.

    Raises:
        ConfigError: as :func:`pass_at_k`.

    Example:
        >>> pass_hat_k(n=4, c=2, k=2)  # C(2,2)/C(4,2) = 1/6
        0.16666666666666666
        >>> pass_hat_k(n=4, c=4, k=4), pass_hat_k(n=4, c=3, k=4)
        (1.0, 0.0)
    """
    _check_counts(n, c, k)
    if c < k:
        return 0.0
    value = 1.0
    for i in range(k):
        value *= (c - i) / (n - i)
    return value


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """Mean pass@k over problems given as ``(n, c)`` pairs (samples, correct samples).

    Every problem needs ``n >= k``; problems with fewer samples would bias the mean, so they
    raise instead of being skipped.

    Example:
        >>> mean_pass_at_k([(10, 0), (10, 10)], k=1)
        0.5
    """
    values = [pass_at_k(n, c, k) for n, c in counts]
    if not values:
        raise ConfigError("mean_pass_at_k needs at least one problem")
    return sum(values) / len(values)


def pass_at_k_from_outcomes(outcomes: Sequence[Sequence[bool]], k: int) -> float:
    """Mean pass@k from per-problem lists of sample outcomes (``True`` = passed).

    Example:
        >>> pass_at_k_from_outcomes([[True, False], [False, False]], k=1)
        0.25
    """
    return mean_pass_at_k(((len(row), sum(bool(x) for x in row)) for row in outcomes), k)


def _check_counts(n: int, c: int, k: int) -> None:
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"pass_at_k: {name} must be a non-negative integer, got {value!r}")
    if c > n:
        raise ConfigError(f"pass_at_k: c={c} correct samples exceeds n={n} samples")
    if not 1 <= k <= n:
        raise ConfigError(f"pass_at_k: k={k} must be between 1 and n={n}; draw more samples")
