"""A run's pass rate under a judge, corrected for the judge's measured errors (Rogan-Gladen).

:func:`judge_error_rates` is the one place a correction takes the judge's TPR and TNR from its
agreement: design-weighted when the agreement is, else the labelled items' counts with the
agreement's reason. ``aieval judges`` and the comparison rule both go through it.
"""

from __future__ import annotations

from collections.abc import Mapping

from aieval.judges._agreement import Agreement, SampleKey
from aieval.stats import CorrectedRate, ErrorRates, correct_pass_rate

__all__ = ["corrected_pass_rate", "judge_error_rates"]


def judge_error_rates(agreement: Agreement) -> ErrorRates:
    """The judge's TPR and TNR for a correction, as ``agreement`` measured them.

    Weighted by a stratified review design (``agreement.weighted`` with ``rates_cov``): the
    weighted estimates with their delta-method variances and covariance. Weighted by a
    self-weighting design: the counts, which are the weighted figures. Otherwise the counts,
    with ``unweighted`` saying why (the agreement's own reason).
    """
    counts = (agreement.true_pos, agreement.positives, agreement.true_neg, agreement.negatives)
    if not agreement.weighted:
        return ErrorRates.from_counts(*counts, unweighted=agreement.unweighted)
    if agreement.rates_cov is None or agreement.tpr is None or agreement.tnr is None:
        return ErrorRates.from_counts(*counts, weighted=True)
    return ErrorRates(
        agreement.tpr.estimate,
        agreement.tnr.estimate,
        *counts,
        covariance=agreement.rates_cov,
        weighted=True,
    )


def corrected_pass_rate(
    verdicts: Mapping[SampleKey, bool], agreement: Agreement, *, confidence: float = 0.95
) -> CorrectedRate:
    """The judge's pass rate over ``verdicts`` beside the rate corrected for its TPR and TNR.

    TPR and TNR come from ``agreement`` through :func:`judge_error_rates`: design-weighted
    (with their stratified variances) when the agreement is, else from its counts, and the
    result's ``weighted``/``unweighted`` say which and why. The interval includes their
    uncertainty and the run's (see :func:`aieval.stats.correct_pass_rate`). Unweighted, it
    assumes the labelled items are drawn like the run's samples.

    Raises:
        ConfigError: no verdicts, too few human-pass or human-fail labels, or a judge no better
            than chance (TPR + TNR - 1 <= 0); the message names the judge and says what to do.
    """
    from aieval.errors import ConfigError

    try:
        return correct_pass_rate(
            sum(verdicts.values()),
            len(verdicts),
            judge_error_rates(agreement),
            confidence=confidence,
        )
    except ConfigError as exc:
        raise ConfigError(f"judge {agreement.judge}: {exc}") from None
