"""What a run of ``epochs > 1`` adds to its summary: pass@k, pass^k and the variance split.

Each example is answered ``epochs`` times (its samples ``<id>#1`` ... ``<id>#N``); the tally
keeps, per example, how many of its answers were stored and passed, and per judged scorer the
judge's verdicts on each answer, so the summary can say how reliably each example passes
(pass^k) and how much of a judged metric's spread the answers cause, apart from the judge's own
noise (docs/grading.md, "Epochs"). An invalid answer (a conversation whose simulated user failed
fidelity, :attr:`aieval.core.Verdict.invalid`) neither passes nor fails: pass@k and pass^k are
over an example's valid answers, and the invalid ones are counted apart
(docs/conversations.md, "pass^k over epochs").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from typing import Any

from aieval._records import SampleRecord, ScoreRecord
from aieval.runner._summary import EpochsSummary
from aieval.stats import pass_at_k, pass_hat_k, variance_split

__all__ = ["EpochTally", "judge_verdicts"]


class EpochTally:
    """Per example: answers stored, valid and passed; per judged scorer: verdicts per answer."""

    def __init__(self, epochs: int) -> None:
        self.epochs = epochs
        #: example id -> [valid answers, answers passed, invalid answers]
        self.counts: dict[str, list[int]] = {}
        #: scorer -> example id -> the judge's verdicts on each answer (one list per epoch)
        self.verdicts: dict[str, dict[str, list[list[float]]]] = {}

    def add(self, sample: SampleRecord) -> None:
        counts = self.counts.setdefault(sample.example_id, [0, 0, 0])
        if sample.verdict is not None and sample.verdict.invalid:
            counts[2] += 1  # neither passed nor failed: out of pass@k and pass^k
        else:
            counts[0] += 1
            counts[1] += bool(sample.passed)
        for name, score in sample.scores.items():
            values = judge_verdicts(score)
            if values:
                by_example = self.verdicts.setdefault(name, {})
                by_example.setdefault(sample.example_id, []).append(values)

    def summary(self) -> EpochsSummary:
        """``n``, ``examples``, ``complete``, mean ``pass_at_k``/``pass_hat_k`` by k (over the
        examples with at least k valid answers), ``variance`` per judged scorer and, when some
        answers were invalid, how many (``invalid``) and the examples with no valid answer
        (``invalid_examples``)."""
        pass_at: dict[str, float | None] = {}
        pass_hat: dict[str, float | None] = {}
        for k in range(1, self.epochs + 1):
            eligible = [(n, c) for n, c, _ in self.counts.values() if n >= k]
            pass_at[str(k)] = _mean(pass_at_k(n, c, k) for n, c in eligible)
            pass_hat[str(k)] = _mean(pass_hat_k(n, c, k) for n, c in eligible)
        return EpochsSummary(
            n=self.epochs,
            examples=len(self.counts),
            complete=sum(n + i >= self.epochs for n, _, i in self.counts.values()),
            pass_at_k=pass_at,
            pass_hat_k=pass_hat,
            variance={
                name: variance_split(list(by_example.values())).to_dict()
                for name, by_example in self.verdicts.items()
            },
            invalid=sum(i for _, _, i in self.counts.values()) or None,
            invalid_examples=sum(not n and i > 0 for n, _, i in self.counts.values()) or None,
        )


def judge_verdicts(score: ScoreRecord) -> list[float]:
    """The judge's readable verdicts on one answer (0..1), when the score is a judge's median
    of them; else empty (not a judge, or verdicts on another scale)."""
    logged = score.metadata.get("verdicts") if score.error is None else None
    if not isinstance(logged, list) or not logged or score.value is None:
        return []
    raw = [v.get("score") if isinstance(v, dict) else None for v in logged]
    values = [_tenth(r) for r in raw]
    # the judge's value is the median of its verdicts, a malformed one counting 0.0: a score
    # that is not (another scale, another aggregate) keeps its verdicts out of the split
    median = statistics.median(0.0 if v is None else v for v in values)
    if not math.isclose(median, score.value, abs_tol=1e-9):
        return []
    return [v for v in values if v is not None]


def _tenth(value: Any) -> float | None:
    """A 0..10 verdict as 0..1; ``None`` for a malformed one (no number)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) / 10.0 if number and math.isfinite(value) else None


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return sum(items) / len(items) if items else None
