"""Statistics: pass@k estimators, rater agreement, confidence intervals, paired comparisons,
and floor comparisons that float rounding cannot flip (``at_least``, ``at_most``)."""

from aieval._floors import at_least, at_most
from aieval.stats._agreement import cohen_kappa, exact_agreement, mean_absolute_error, spearman
from aieval.stats._bootstrap import ConfidenceInterval, bootstrap_ci, wilson_interval
from aieval.stats._describe import histogram, quantiles, sample_std
from aieval.stats._noninferiority import (
    NoninferiorityMethod,
    NoninferiorityResult,
    noninferiority_test,
)
from aieval.stats._paired import paired_bootstrap_ci
from aieval.stats._passk import mean_pass_at_k, pass_at_k, pass_at_k_from_outcomes, pass_hat_k
from aieval.stats._variance import VarianceSplit, variance_split

__all__ = [
    "ConfidenceInterval",
    "NoninferiorityMethod",
    "NoninferiorityResult",
    "VarianceSplit",
    "at_least",
    "at_most",
    "bootstrap_ci",
    "cohen_kappa",
    "exact_agreement",
    "histogram",
    "mean_absolute_error",
    "mean_pass_at_k",
    "noninferiority_test",
    "paired_bootstrap_ci",
    "pass_at_k",
    "pass_at_k_from_outcomes",
    "pass_hat_k",
    "quantiles",
    "sample_std",
    "spearman",
    "variance_split",
    "wilson_interval",
]
