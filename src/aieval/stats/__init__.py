"""Statistics: pass@k estimators, rater agreement and confidence intervals."""

from aieval.stats._agreement import cohen_kappa, exact_agreement, mean_absolute_error, spearman
from aieval.stats._bootstrap import ConfidenceInterval, bootstrap_ci, wilson_interval
from aieval.stats._passk import mean_pass_at_k, pass_at_k, pass_at_k_from_outcomes

__all__ = [
    "ConfidenceInterval",
    "bootstrap_ci",
    "cohen_kappa",
    "exact_agreement",
    "mean_absolute_error",
    "mean_pass_at_k",
    "pass_at_k",
    "pass_at_k_from_outcomes",
    "spearman",
    "wilson_interval",
]
