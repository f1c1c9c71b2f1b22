"""Statistics: pass@k estimators, rater agreement (a judge against humans: kappa intervals, the
Rogan-Gladen corrected pass rate), confidence intervals (several columns'
bootstrap means from one resample stream; Student's t from moments or from sums), paired
comparisons and those of two independent samples (Newcombe, Welch), judge-human agreement
weighted back from a stratified sample of labels, and
floor comparisons that float rounding cannot flip (``at_least``, ``at_most``)."""

from typing import TYPE_CHECKING

from aieval._lazy import lazy_exports

if TYPE_CHECKING:
    from aieval._floors import at_least, at_most
    from aieval.stats._agreement import cohen_kappa, exact_agreement, mean_absolute_error, spearman
    from aieval.stats._bootstrap import (
        ConfidenceInterval,
        bootstrap_ci,
        bootstrap_mean_cis,
        wilson_interval,
    )
    from aieval.stats._closed_form import (
        moments_from_sums,
        paired_t_interval,
        t_interval,
        t_interval_from_moments,
        t_interval_from_sums,
    )
    from aieval.stats._describe import QUANTILE_POINTS, histogram, quantiles, sample_std
    from aieval.stats._independent import newcombe_interval, welch_interval
    from aieval.stats._judge_error import (
        CorrectedRate,
        ErrorRates,
        correct_pass_rate,
        fleiss_kappa,
        kappa_interval,
        rogan_gladen,
    )
    from aieval.stats._noninferiority import (
        NoninferiorityMethod,
        NoninferiorityResult,
        noninferiority_from_counts,
        noninferiority_from_moments,
        noninferiority_test,
    )
    from aieval.stats._paired import paired_bootstrap_ci, paired_bootstrap_cis
    from aieval.stats._passk import mean_pass_at_k, pass_at_k, pass_at_k_from_outcomes, pass_hat_k
    from aieval.stats._resample import resample_means_many, resample_progress
    from aieval.stats._survey import WeightedAgreement, stratum_sizes, weighted_agreement
    from aieval.stats._variance import VarianceSplit, variance_split

__all__ = [
    "QUANTILE_POINTS",
    "ConfidenceInterval",
    "CorrectedRate",
    "ErrorRates",
    "NoninferiorityMethod",
    "NoninferiorityResult",
    "VarianceSplit",
    "WeightedAgreement",
    "at_least",
    "at_most",
    "bootstrap_ci",
    "bootstrap_mean_cis",
    "cohen_kappa",
    "correct_pass_rate",
    "exact_agreement",
    "fleiss_kappa",
    "histogram",
    "kappa_interval",
    "mean_absolute_error",
    "mean_pass_at_k",
    "moments_from_sums",
    "newcombe_interval",
    "noninferiority_from_counts",
    "noninferiority_from_moments",
    "noninferiority_test",
    "paired_bootstrap_ci",
    "paired_bootstrap_cis",
    "paired_t_interval",
    "pass_at_k",
    "pass_at_k_from_outcomes",
    "pass_hat_k",
    "quantiles",
    "resample_means_many",
    "resample_progress",
    "rogan_gladen",
    "sample_std",
    "spearman",
    "stratum_sizes",
    "t_interval",
    "t_interval_from_moments",
    "t_interval_from_sums",
    "variance_split",
    "weighted_agreement",
    "welch_interval",
    "wilson_interval",
]

_EXPORTS = {
    "at_least": "aieval._floors",
    "at_most": "aieval._floors",
    "cohen_kappa": "aieval.stats._agreement",
    "exact_agreement": "aieval.stats._agreement",
    "mean_absolute_error": "aieval.stats._agreement",
    "spearman": "aieval.stats._agreement",
    "ConfidenceInterval": "aieval.stats._bootstrap",
    "bootstrap_ci": "aieval.stats._bootstrap",
    "bootstrap_mean_cis": "aieval.stats._bootstrap",
    "wilson_interval": "aieval.stats._bootstrap",
    "moments_from_sums": "aieval.stats._closed_form",
    "paired_t_interval": "aieval.stats._closed_form",
    "t_interval": "aieval.stats._closed_form",
    "t_interval_from_moments": "aieval.stats._closed_form",
    "t_interval_from_sums": "aieval.stats._closed_form",
    "QUANTILE_POINTS": "aieval.stats._describe",
    "histogram": "aieval.stats._describe",
    "quantiles": "aieval.stats._describe",
    "sample_std": "aieval.stats._describe",
    "newcombe_interval": "aieval.stats._independent",
    "welch_interval": "aieval.stats._independent",
    "CorrectedRate": "aieval.stats._judge_error",
    "ErrorRates": "aieval.stats._judge_error",
    "correct_pass_rate": "aieval.stats._judge_error",
    "fleiss_kappa": "aieval.stats._judge_error",
    "kappa_interval": "aieval.stats._judge_error",
    "rogan_gladen": "aieval.stats._judge_error",
    "NoninferiorityMethod": "aieval.stats._noninferiority",
    "NoninferiorityResult": "aieval.stats._noninferiority",
    "noninferiority_from_counts": "aieval.stats._noninferiority",
    "noninferiority_from_moments": "aieval.stats._noninferiority",
    "noninferiority_test": "aieval.stats._noninferiority",
    "paired_bootstrap_ci": "aieval.stats._paired",
    "paired_bootstrap_cis": "aieval.stats._paired",
    "mean_pass_at_k": "aieval.stats._passk",
    "pass_at_k": "aieval.stats._passk",
    "pass_at_k_from_outcomes": "aieval.stats._passk",
    "pass_hat_k": "aieval.stats._passk",
    "resample_means_many": "aieval.stats._resample",
    "resample_progress": "aieval.stats._resample",
    "WeightedAgreement": "aieval.stats._survey",
    "stratum_sizes": "aieval.stats._survey",
    "weighted_agreement": "aieval.stats._survey",
    "VarianceSplit": "aieval.stats._variance",
    "variance_split": "aieval.stats._variance",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
