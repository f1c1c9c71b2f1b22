"""How much of a judged metric's spread comes from the answers, and how much from the judge.

A run with ``epochs`` answers each example several times, and a judge with ``samples`` grades
each answer several times. Two variances separate the two sources (method of moments for the
nested design example > answer > judge verdict; docs/grading.md, "Epochs"):

- judge variance: the pooled variance of the verdicts on one same answer,
  ``sum((y - mean_answer)^2) / sum(S_a - 1)`` over answers graded at least twice;
- answer variance: the pooled variance between the epochs of one example of the per-answer
  mean verdicts, ``sum((mean_answer - mean_example)^2) / sum(E_i - 1)``, less the judge's share
  of it (a mean of ``S`` verdicts still carries ``judge variance / S``), floored at 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from aieval.errors import ConfigError

__all__ = ["VarianceSplit", "variance_split"]


@dataclass(frozen=True, slots=True)
class VarianceSplit:
    """The answer and judge components of a judged metric's variance.

    Attributes:
        examples: examples with at least two answered epochs (those the answer variance uses).
        answers: answers graded (every epoch of every example that has a verdict).
        judge_samples: the mean number of verdicts per answer.
        judge_variance: within-answer variance (judge noise); ``None`` when no answer has two
            verdicts (a judge with ``samples: 1`` cannot show its own noise).
        between_epochs: the raw pooled between-epoch variance of the per-answer means.
        answer_variance: ``between_epochs`` less ``judge_variance`` times the mean of ``1/S``
            (floored at 0); without a judge variance it is ``between_epochs`` itself, judge
            noise included.
        answer_share: ``answer_variance / (answer_variance + judge_variance)``; ``None`` when
            either is unknown or both are 0.
    """

    examples: int
    answers: int
    judge_samples: float
    judge_variance: float | None
    between_epochs: float | None
    answer_variance: float | None
    answer_share: float | None

    @property
    def judge_share(self) -> float | None:
        """``1 - answer_share``: the share of the variance that is the judge's noise."""
        return None if self.answer_share is None else 1.0 - self.answer_share

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers (``judge_share`` included)."""
        return {**asdict(self), "judge_share": self.judge_share}


def variance_split(examples: Sequence[Sequence[Sequence[float]]]) -> VarianceSplit:
    """Split a judged metric's variance into answer noise and judge noise.

    Args:
        examples: per example, per answer (epoch), the judge's verdicts on that answer
            (0..1). Answers without a verdict are left out before calling.

    Raises:
        ConfigError: an answer with no verdict.

    Example:
        >>> split = variance_split([[[0.0, 0.2], [1.0, 0.8]], [[0.5, 0.5], [0.5, 0.5]]])
        >>> [round(x, 4) for x in (split.judge_variance, split.answer_variance, split.answer_share)]
        [0.01, 0.155, 0.9394]
    """
    within_ss, within_df = 0.0, 0
    between_ss, between_df = 0.0, 0
    inverse_sizes: list[float] = []
    answers = used = 0
    for i, epochs in enumerate(examples):
        means = []
        for verdicts in epochs:
            if not verdicts:
                raise ConfigError(f"variance_split: example {i} has an answer with no verdict")
            mean = sum(verdicts) / len(verdicts)
            means.append(mean)
            within_ss += sum((v - mean) ** 2 for v in verdicts)
            within_df += len(verdicts) - 1
            inverse_sizes.append(1.0 / len(verdicts))
        answers += len(means)
        if len(means) >= 2:
            used += 1
            centre = sum(means) / len(means)
            between_ss += sum((m - centre) ** 2 for m in means)
            between_df += len(means) - 1
    judge = within_ss / within_df if within_df else None
    between = between_ss / between_df if between_df else None
    answer = between
    if between is not None and judge is not None:
        answer = max(0.0, between - judge * sum(inverse_sizes) / len(inverse_sizes))
    share = None
    if answer is not None and judge is not None and answer + judge > 0:
        share = answer / (answer + judge)
    return VarianceSplit(
        examples=used,
        answers=answers,
        judge_samples=len(inverse_sizes) / sum(inverse_sizes) if inverse_sizes else 0.0,
        judge_variance=judge,
        between_epochs=between,
        answer_variance=answer,
        answer_share=share,
    )
