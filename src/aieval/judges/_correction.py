"""A run's pass rate under a judge, corrected for the judge's measured errors (Rogan-Gladen)."""

from __future__ import annotations

from collections.abc import Mapping

from aieval.judges._agreement import Agreement, SampleKey
from aieval.stats import CorrectedRate, rogan_gladen

__all__ = ["corrected_pass_rate"]


def corrected_pass_rate(
    verdicts: Mapping[SampleKey, bool], agreement: Agreement, *, confidence: float = 0.95
) -> CorrectedRate:
    """The judge's pass rate over ``verdicts`` beside the rate corrected for its TPR and TNR.

    TPR and TNR come from ``agreement`` (the judge against its human reference); the interval
    includes their uncertainty and the run's (see :func:`aieval.stats.rogan_gladen`). It
    assumes the labelled items are drawn like the run's samples (the judge errs on them as on
    the rest).

    Raises:
        ConfigError: no verdicts, too few human-pass or human-fail labels, or a judge no better
            than chance (TPR + TNR - 1 <= 0); the message names the judge and says what to do.
    """
    from aieval.errors import ConfigError

    try:
        return rogan_gladen(
            sum(verdicts.values()),
            len(verdicts),
            true_pos=agreement.true_pos,
            positives=agreement.positives,
            true_neg=agreement.true_neg,
            negatives=agreement.negatives,
            confidence=confidence,
        )
    except ConfigError as exc:
        raise ConfigError(f"judge {agreement.judge}: {exc}") from None
