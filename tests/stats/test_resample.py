"""The shared-stream, threaded bootstrap equals the plain per-column loop to the last digit."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from aieval.errors import ConfigError
from aieval.stats import (
    _resample,
    bootstrap_ci,
    bootstrap_mean_cis,
    noninferiority_test,
    paired_bootstrap_ci,
    paired_bootstrap_cis,
    resample_means_many,
)
from aieval.stats._noninferiority import _ratio
from aieval.stats._resample import BLOCK_ENTRIES, resample_means, resample_rows


def loop_means(
    values: np.ndarray, n_resamples: int, seed: int | None, block_entries: int
) -> np.ndarray:
    """The bootstrap of the mean as it was written before the shared stream: the oracle."""
    rng = np.random.default_rng(seed)
    n = values.size
    out = np.empty(n_resamples)
    block = max(1, block_entries // n)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        idx = rng.integers(0, n, size=(rows, n))
        out[start : start + rows] = values[idx].mean(axis=1)
    return out


def loop_studentized(d: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The bootstrap-t statistics as they were computed before, block by block."""
    n = d.size
    centred = d - d.mean()
    rng = np.random.default_rng(seed)
    t = np.empty(n_resamples)
    block = max(1, BLOCK_ENTRIES // n)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        x = centred[rng.integers(0, n, size=(rows, n))]
        s1 = x.sum(axis=1)
        var = np.maximum((np.einsum("ij,ij->i", x, x) - s1 * s1 / n) / (n - 1), 0.0)
        t[start : start + rows] = _ratio(s1 / n, np.sqrt(var / n))
    return t


def columns(n: int, k: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    # values of unlike scales and signs, so that any other summation order shows
    return [rng.standard_normal(n) * 10.0 ** (j - 2) + rng.random(n) * 1e3 for j in range(k)]


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> int:
    """Blocks of 5,000 entries and threads from 1,000: many blocks and threads on small data."""
    monkeypatch.setattr(_resample, "BLOCK_ENTRIES", 5_000)
    monkeypatch.setattr(_resample, "_CHUNK_ENTRIES", 700)
    monkeypatch.setattr(_resample, "_THREADED_ENTRIES", 1_000)
    return 5_000


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 100, 1000, 4999, 5001, 65537])
@pytest.mark.parametrize("n_resamples", [1, 3, 2000])
@pytest.mark.parametrize("workers", [0, 1, 2, 3])
def test_many_columns_equal_the_loop_per_column(
    small_blocks: int, n: int, n_resamples: int, workers: int
) -> None:
    if n == 65537 and n_resamples == 2000:
        pytest.skip("too slow with blocks this small; test_default_blocks_equal_the_loop runs it")
    data = columns(n, 3, seed=n)
    for seed in (0, 12345):
        many = resample_means_many(data, n_resamples=n_resamples, seed=seed, workers=workers)
        assert many.shape == (3, n_resamples)
        for j, column in enumerate(data):
            expected = loop_means(column, n_resamples, seed, small_blocks)
            assert np.array_equal(many[j], expected), (n, n_resamples, workers, seed, j)


@pytest.mark.parametrize("n", [1, 7, 1000, 65537, 100_000])
def test_default_blocks_equal_the_loop(n: int) -> None:
    data = columns(n, 2, seed=7)
    resamples = {65537: 200, 100_000: 3}.get(n, 2000)
    many = resample_means_many(data, n_resamples=resamples, seed=0)
    for j, column in enumerate(data):
        assert np.array_equal(many[j], loop_means(column, resamples, 0, BLOCK_ENTRIES))
    assert np.array_equal(resample_means(data[0], n_resamples=resamples), many[0])


@pytest.mark.slow
def test_a_report_sized_bootstrap_is_unchanged() -> None:
    """100,000 values, 2,000 resamples, seed 0: the figures of a report of that size."""
    data = columns(100_000, 2, seed=3)
    many = resample_means_many(data, n_resamples=2000, seed=0)
    assert np.array_equal(many[1], loop_means(data[1], 2000, 0, BLOCK_ENTRIES))


def test_the_result_does_not_depend_on_threads(small_blocks: int) -> None:
    data = columns(3001, 4, seed=1)
    runs = [resample_means_many(data, n_resamples=500, seed=9, workers=w) for w in (0, 1, 2, 4, 7)]
    for other in runs[1:]:
        assert np.array_equal(runs[0], other)


def test_gathering_runs_on_worker_threads(small_blocks: int) -> None:
    seen: set[int] = set()

    def kernel(idx: np.ndarray, first: int) -> None:
        seen.add(threading.get_ident())

    resample_rows(1000, 400, 0, kernel, workers=2)
    assert seen and threading.get_ident() not in seen


def test_every_row_is_handed_over_once_in_order_of_the_stream(small_blocks: int) -> None:
    rows: list[tuple[int, int]] = []

    def kernel(idx: np.ndarray, first: int) -> None:
        rows.append((first, len(idx)))

    resample_rows(300, 123, 0, kernel, workers=3)
    covered = sorted(r for first, count in rows for r in range(first, first + count))
    assert covered == list(range(123))


def test_a_failing_kernel_raises(small_blocks: int) -> None:
    def kernel(idx: np.ndarray, first: int) -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        resample_rows(1000, 400, 0, kernel, workers=2)


def test_bad_columns_are_named() -> None:
    with pytest.raises(ConfigError, match="column 1 has shape \\(2,\\)"):
        resample_means_many([np.ones(3), np.ones(2)])
    with pytest.raises(ConfigError, match="at least one column"):
        resample_means_many([])
    with pytest.raises(ConfigError, match="column 0"):
        resample_means_many([np.ones((2, 2))])
    with pytest.raises(ConfigError, match="n_resamples"):
        resample_means_many([np.ones(2)], n_resamples=-1)


def test_mean_cis_equal_bootstrap_ci_for_equal_and_unequal_lengths(small_blocks: int) -> None:
    data: list[list[float]] = [c.tolist() for c in columns(900, 3, seed=4)]
    data += [c.tolist() for c in columns(17, 2, seed=5)]
    data.append([1.0, math.nan, 2.0])  # bootstrap_ci's loop path for non-finite values
    data.append([4.0])
    for seed in (0, 3):
        ours = bootstrap_mean_cis(data, confidence=0.9, n_resamples=300, seed=seed)
        expected = [
            bootstrap_ci(np.mean, c, confidence=0.9, n_resamples=300, seed=seed) for c in data
        ]
        assert repr(ours) == repr(expected)  # repr: nan equals nan, every digit shown


def test_mean_cis_reject_what_bootstrap_ci_rejects() -> None:
    with pytest.raises(ConfigError, match="non-empty"):
        bootstrap_mean_cis([[1.0], []])
    with pytest.raises(ConfigError, match="confidence"):
        bootstrap_mean_cis([[1.0]], confidence=1.0)


@pytest.mark.parametrize("n", [2, 3, 50, 2001])
def test_paired_and_studentized_bootstraps_are_unchanged(n: int) -> None:
    base, cand = columns(n, 2, seed=n)
    ci = paired_bootstrap_ci(base, cand, n_resamples=2000, seed=1)
    diffs = loop_means(cand - base, 2000, 1, BLOCK_ENTRIES)
    tail = (1.0 - 0.95) / 2.0  # as the interval computes it: not exactly 0.025
    low, high = np.quantile(diffs, [tail, 1.0 - tail])
    assert (ci.low, ci.high) == (float(low), float(high))
    median = paired_bootstrap_ci(base, cand, statistic=np.median, n_resamples=500, seed=2)
    rng = np.random.default_rng(2)
    idx = rng.integers(0, n, size=(500, n))
    deltas = np.median(cand[idx], axis=1) - np.median(base[idx], axis=1)
    assert (median.low, median.high) == tuple(
        float(q) for q in np.quantile(deltas, [tail, 1.0 - tail])
    )
    d = cand - base
    result = noninferiority_test(d, margin=1.0, method="bootstrap-t", n_resamples=999, seed=5)
    t = np.sort(loop_studentized(d, 999, 5))
    se = float((d - d.mean()).std(ddof=1)) / math.sqrt(n)
    hi = t[min(998, math.ceil(1000 * (1.0 - 0.05)) - 1)]
    assert result.lower_bound == max(float(d.min()), float(d.mean()) - float(hi) * se)
    assert result.p_value == (1 + int(np.count_nonzero(t >= result.statistic))) / 1000


def test_paired_cis_equal_one_paired_ci_per_metric(small_blocks: int) -> None:
    base, cand = columns(800, 2, seed=8)
    short_b, short_c = columns(33, 2, seed=9)
    with_nan = cand.copy()
    with_nan[3] = math.nan
    pairs = [(base, cand), (cand, base), (short_b, short_c), (base, with_nan), ([1.0], [2.0])]
    for seed in (0, 21):
        ours = paired_bootstrap_cis(pairs, confidence=0.9, n_resamples=250, seed=seed)
        expected = [
            paired_bootstrap_ci(b, c, confidence=0.9, n_resamples=250, seed=seed) for b, c in pairs
        ]
        assert repr(ours) == repr(expected)


def test_paired_cis_name_the_bad_pair() -> None:
    with pytest.raises(ConfigError, match=r"pair 1: .* got 2 and 3"):
        paired_bootstrap_cis([([1.0], [2.0]), ([1.0, 2.0], [1.0, 2.0, 3.0])])
    with pytest.raises(ConfigError, match="confidence"):
        paired_bootstrap_cis([([1.0], [2.0])], confidence=0.0)
