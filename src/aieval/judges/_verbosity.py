"""The padding test: does a judge reward the same answer more when filler is appended?"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aieval.errors import ConfigError, ScorerError
from aieval.scorers import Scorer

__all__ = ["DEFAULT_FILLER", "PaddingReport", "padding_test"]

DEFAULT_FILLER = (
    "\n\nTo elaborate further, it is worth noting that this answer has been considered "
    "carefully and thoroughly, taking into account all relevant aspects of the question, "
    "so that the response is as complete and comprehensive as it can possibly be."
)


@dataclass(slots=True, frozen=True)
class PaddingReport:
    """Scores of each answer as given and with filler appended.

    Attributes:
        plain / padded: the judge's values, sample by sample.
        mean_delta: mean of ``padded - plain`` (positive: filler is rewarded).
        inflated_rate: share of samples that scored higher once padded.
    """

    plain: list[float]
    padded: list[float]
    mean_delta: float
    inflated_rate: float


async def padding_test(
    judge: Scorer,
    prompts: Sequence[str],
    predictions: Sequence[str],
    expected: Sequence[Any] | None = None,
    *,
    filler: str = DEFAULT_FILLER,
) -> PaddingReport:
    """Score each prediction twice, as is and with ``filler`` appended (same content, longer).

    A judge free of verbosity bias gives ``mean_delta`` near 0 and ``inflated_rate`` near 0.
    """
    if len(prompts) != len(predictions) or (expected is not None and len(expected) != len(prompts)):
        raise ConfigError("padding_test: give one prompt, prediction (and expected) per sample")
    refs = list(expected) if expected is not None else [None] * len(prompts)

    async def value(prompt: str, text: str, ref: Any) -> float:
        score = await judge.score(text, ref, {"prompt": prompt})
        if score.value is None:
            raise ScorerError(f"padding_test: judge {judge.name!r} did not score a sample")
        return score.value

    try:
        plain = await asyncio.gather(*map(value, prompts, predictions, refs))
        padded = await asyncio.gather(
            *(value(p, t + filler, r) for p, t, r in zip(prompts, predictions, refs, strict=True))
        )
    finally:
        closer = getattr(judge.fn, "aclose", None)
        if closer is not None:
            await closer()
    deltas = [b - a for a, b in zip(plain, padded, strict=True)]
    n = max(1, len(deltas))
    return PaddingReport(
        list(plain), list(padded), sum(deltas) / n, sum(d > 1e-9 for d in deltas) / n
    )
