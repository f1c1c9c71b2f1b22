"""A rule's results per window: each window's stored run read through the store's sums (one
query per figure, not a pass over the samples), with the pass rate's Wilson interval and each
scorer's mean with a Student's t interval (95%, the project's own interval functions).

A window with no scored sample has no rate or mean (``None``), never a made-up 0."""

from __future__ import annotations

from dataclasses import dataclass, field

from aieval.online._model import OnlineRule, window_run_name
from aieval.stats import (
    ConfidenceInterval,
    moments_from_sums,
    t_interval_from_sums,
    wilson_interval,
)
from aieval.store import Store, WindowRow

__all__ = ["CONFIDENCE", "MeanScore", "WindowSummary", "window_summaries"]

#: The coverage of every window interval.
CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True)
class MeanScore:
    """One scorer's values in a window: how many, their mean and sample sd (0 below two), and
    the mean's t interval."""

    scorer: str
    n: int
    mean: float
    sd: float
    interval: ConfidenceInterval


@dataclass(frozen=True, slots=True)
class WindowSummary:
    """One window of a rule (times in epoch seconds, UTC; ``end`` exclusive).

    Attributes:
        run_id: the stored run holding the window's samples; ``run_name`` its name
            (``online/<rule>/<window>``), which ``aieval compare`` and ``aieval report`` take.
        closed: the window ended and its work is done (only closed windows alert).
        scored: samples in the run; ``passed``: those that passed.
        pass_rate: ``passed / scored`` with its Wilson interval (``None`` when nothing scored).
        means: per scorer, its mean with a t interval (scorers without values left out).
    """

    rule: str
    start: float
    end: float
    run_id: str
    run_name: str
    closed: bool
    scored: int
    passed: int
    pass_rate: ConfidenceInterval | None
    means: dict[str, MeanScore] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The window's label, the last part of its run's name (``2026-11-30T04``)."""
        return self.run_name.rsplit("/", 1)[-1]


def window_summaries(
    store: Store, rule: OnlineRule, since: float | None = None, until: float | None = None
) -> list[WindowSummary]:
    """The windows of ``rule`` starting in ``[since, until)`` (all when ``None``), oldest first."""
    return [_summary(store, rule, row) for row in store.online_windows(rule.name, since, until)]


def _summary(store: Store, rule: OnlineRule, row: WindowRow) -> WindowSummary:
    name = window_run_name(rule.name, row.start, rule.window)
    sums = store.run_sums(row.run_id)
    if sums is None:
        scored, passed, values = _counted(store, row.run_id)
    else:
        scored, passed = sums.samples, sums.passed
        values = {s.name: (s.values.n, s.values.total, s.values.squares) for s in sums.scorers}
    means = {
        scorer: _mean(scorer, n, total, squares)
        for scorer, (n, total, squares) in values.items()
        if n > 0
    }
    return WindowSummary(
        rule=rule.name,
        start=row.start,
        end=row.end,
        run_id=row.run_id,
        run_name=name,
        closed=row.closed,
        scored=scored,
        passed=passed,
        pass_rate=wilson_interval(passed, scored, confidence=CONFIDENCE) if scored else None,
        means=means,
    )


def _mean(scorer: str, n: int, total: float, squares: float) -> MeanScore:
    mean, sd = moments_from_sums(n, total, squares)
    interval = t_interval_from_sums(n, total, squares, confidence=CONFIDENCE)
    return MeanScore(scorer, n, mean, sd, interval)


def _counted(store: Store, run_id: str) -> tuple[int, int, dict[str, tuple[int, float, float]]]:
    """The figures of a run whose samples are not all in the typed columns (an older store's
    run): read one sample at a time, as the report then does."""
    scored = passed = 0
    values: dict[str, tuple[int, float, float]] = {}
    for sample in store.iter_samples(run_id, texts=False, predictions=False):
        scored += 1
        passed += bool(sample.passed)
        for scorer, score in sample.scores.items():
            if score.value is None:
                continue
            n, total, squares = values.get(scorer, (0, 0.0, 0.0))
            v = float(score.value)
            values[scorer] = (n + 1, total + v, squares + v * v)
    return scored, passed, values
