"""The threshold grader of plain runs: the pass rule, the weighted score and the reasons."""

from __future__ import annotations

import math
from collections.abc import Mapping

from aieval._floors import at_least
from aieval._numbers import finite
from aieval.core._grader import DEFAULT_PASS_THRESHOLD, GradeInput, GraderRequest
from aieval.core._records import SampleRecord
from aieval.core._verdict import Reason, Verdict

__all__ = ["ThresholdGrader", "factory", "scorer_reasons", "threshold_reasons", "ungraded_score"]

_INF = math.inf


class ThresholdGrader:
    """A sample passes when its target did not fail, something was scored, and every score
    is valid (no error, no malformed judge verdict) and at least its threshold (n/a scores
    aside): the scorer's own (``GradeInput.thresholds``), else ``pass_threshold``. Its weighted
    score is 100 x the mean of its scorer values, weighted by ``GradeInput.weights`` (default
    1; 0 when the target failed, ``None`` when nothing was scored or every weight is 0).
    """

    name = "threshold"

    def __init__(self, pass_threshold: float = DEFAULT_PASS_THRESHOLD) -> None:
        self.pass_threshold = pass_threshold

    def grade(self, sample: GradeInput) -> Verdict:
        """The verdict on one sample (see the class docstring)."""
        return self.decide(sample.record, sample.thresholds, sample.weights)

    def decide(
        self,
        record: SampleRecord,
        thresholds: Mapping[str, float] | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> Verdict:
        """:meth:`grade` of the sample ``record`` (what the grader reads of its input)."""
        return threshold_verdict(
            record, self.pass_threshold, thresholds=thresholds, weights=weights
        )


def factory(request: GraderRequest) -> ThresholdGrader:
    """The ``threshold`` entry point of the ``aieval.graders`` group."""
    return ThresholdGrader(request.pass_threshold)


def threshold_verdict(
    record: SampleRecord,
    threshold: float,
    passed: bool | None = None,
    *,
    thresholds: Mapping[str, float] | None = None,
    weights: Mapping[str, float] | None = None,
) -> Verdict:
    """The threshold grader's verdict on ``record``; ``passed`` overrides the pass rule (a
    stored sample keeps the flag it was stored with). ``thresholds`` and ``weights`` are the
    scorers' own (by score name), beside ``threshold``, the run's, and weight 1."""
    own = thresholds or {}
    if passed is None and record.error is None and not own:
        plain = _plain_verdict(record, threshold, weights)
        if plain is not None:
            return plain
    if passed is None:
        # a malformed judge verdict keeps its 0.0 (or tie) but never passes; a sample every
        # scorer found not applicable (unscored) has no score to pass with
        passed = (
            record.error is None
            and not record.unscored
            and all(
                s.error is None
                and s.malformed is None
                and (s.value is None or at_least(s.value, own.get(name, threshold)))
                for name, s in record.scores.items()
            )
        )
    scores = {name: finite(s.value) for name, s in record.scores.items()}
    reasons: tuple[Reason, ...] = ()
    if not passed:
        reasons = scorer_reasons(record) + threshold_reasons(record.error, scores, threshold, own)
    used = {name: w for name, w in (weights or {}).items() if name in scores and w != 1.0}
    return Verdict(
        passed=passed,
        reasons=reasons,
        weighted_score=ungraded_score(record.error, scores, used),
        grader="threshold",
        weights=used,
    )


def _plain_verdict(
    record: SampleRecord, threshold: float, weights: Mapping[str, float] | None
) -> Verdict | None:
    """:func:`threshold_verdict` of a sample with no error whose scores are all finite floats
    without error, malformed verdict or judge reason, under one threshold and weights of 1,
    in one pass (nearly every sample of a large run); ``None`` for any other sample, which
    the general rule decides. The verdict is the same as the general rule's."""
    scores = record.scores
    if not scores or (weights and any(w != 1.0 for w in weights.values())):
        return None
    values: list[float] = []
    reasons: list[Reason] = []
    for name, s in scores.items():
        value = s.value
        if (
            type(value) is not float
            or not -_INF < value < _INF
            or s.error is not None
            or s.unreadable
            or ("parse_failures" in s.metadata and s.reason)
        ):
            return None
        values.append(value)
        if value < threshold and not at_least(value, threshold):
            reasons.append(_below(name, threshold))
    return Verdict(
        passed=not reasons,
        reasons=tuple(reasons),
        weighted_score=100.0 * sum(values) / len(values),
        grader="threshold",
        weights={},
    )


#: The threshold reasons made so far, by score name and threshold: a reason is immutable, and
#: a large run gives the same few thousands of times. Bounded: a row's own check names are data.
_BELOW: dict[tuple[str, float], Reason] = {}
_BELOW_MAX = 1024


def _below(name: str, threshold: float) -> Reason:
    """``Reason("threshold", name, "<name> below the pass threshold <threshold>")``."""
    reason = _BELOW.get((name, threshold))
    if reason is None:
        reason = Reason("threshold", name, f"{name} below the pass threshold {threshold:g}")
        # 0.0 and -0.0 are one key but two texts ("0", "-0"): such a reason is not kept
        if len(_BELOW) < _BELOW_MAX and threshold != 0.0:
            _BELOW[name, threshold] = reason
    return reason


def scorer_reasons(record: SampleRecord) -> tuple[Reason, ...]:
    """The target's failure, then each scorer's failure, malformed verdict or judge reason."""
    found: list[Reason] = []
    if record.error:
        found.append(Reason("error", "target", record.error))
    for name, score in record.scores.items():
        if score.malformed:  # scored 0.0 (or, in older stores, an error)
            found.append(Reason("malformed", name, score.malformed))
        elif score.error:
            found.append(Reason("error", name, score.error))
        elif "parse_failures" in score.metadata and score.reason:
            found.append(Reason("judge", name, score.reason))
    return tuple(found)


def threshold_reasons(
    error: str | None,
    scores: Mapping[str, float | None],
    threshold: float,
    thresholds: Mapping[str, float] | None = None,
) -> tuple[Reason, ...]:
    """The scores below their threshold: the scorer's own in ``thresholds``, else
    ``threshold`` (none when the target failed)."""
    if error:
        return ()
    own = thresholds or {}
    found = []
    for name, value in scores.items():
        if value is None:
            continue
        if name in own:
            if not at_least(value, own[name]):
                text = f"{name} scored {value:.4g}, below its threshold {own[name]:g}"
                found.append(Reason("threshold", name, text))
        elif not at_least(value, threshold):
            text = f"{name} below the pass threshold {threshold:g}"
            found.append(Reason("threshold", name, text))
    return tuple(found)


def ungraded_score(
    error: str | None,
    scores: Mapping[str, float | None],
    weights: Mapping[str, float] | None = None,
) -> float | None:
    """0..100 mean of the scorer values, each weighted by ``weights`` (by name; default 1):
    0 when the target failed; ``None`` if none scored, or every scored weight is 0."""
    if error is not None:
        return 0.0
    if weights and any(w != 1.0 for w in weights.values()):
        pairs = [(weights.get(n, 1.0), v) for n, v in scores.items() if v is not None]
        total = sum(w for w, _ in pairs)
        return 100.0 * sum(w * v for w, v in pairs) / total if total > 0 else None
    values = [v for v in scores.values() if v is not None]
    return 100.0 * sum(values) / len(values) if values else None
