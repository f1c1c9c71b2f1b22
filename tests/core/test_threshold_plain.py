"""The threshold grader's one-pass rule for plain float scores gives the verdict of its
general rule on every kind of sample: values at, above and below the threshold (float noise
included), n/a, errors, malformed judge verdicts, judge reasons, integers, NaN and weights."""

from __future__ import annotations

import itertools
import math
from typing import Any

from aieval.core import SampleRecord, ScoreRecord
from aieval.core._threshold import _plain_verdict, threshold_verdict

_SCORES: list[ScoreRecord] = [
    ScoreRecord(1.0),
    ScoreRecord(0.0),
    ScoreRecord(0.5),
    ScoreRecord(sum([0.05] * 10)),  # 0.5 up to float noise: meets the threshold
    ScoreRecord(0.4999),
    ScoreRecord(1),  # an int
    ScoreRecord(None),  # n/a
    ScoreRecord(None, error="boom"),
    ScoreRecord(0.0, unreadable="no verdict"),
    ScoreRecord(0.2, reason="judge says no", metadata={"parse_failures": 1}),
    ScoreRecord(math.nan),
    ScoreRecord(math.inf),
]


def _general(record: SampleRecord, threshold: float, weights: Any) -> Any:
    # a threshold of its own for a scorer the sample lacks: the general rule, same meaning
    return threshold_verdict(record, threshold, thresholds={"absent": threshold}, weights=weights)


def test_the_one_pass_rule_equals_the_general_rule() -> None:
    fast = 0
    for size in (0, 1, 2, 3):
        for scores in itertools.product(_SCORES, repeat=size):
            for error in (None, "target failed"):
                record = SampleRecord(id="s", index=0, input="q", error=error)
                record.scores = {f"m{i}": s for i, s in enumerate(scores)}
                for threshold, weights in ((0.5, None), (0.0, {"m0": 1.0}), (0.5, {"m0": 2.0})):
                    expected = _general(record, threshold, weights)
                    assert threshold_verdict(record, threshold, weights=weights) == expected
                    if error is None and _plain_verdict(record, threshold, weights) is not None:
                        fast += 1
                        assert expected.weights == {}
    assert fast > 100  # the one-pass rule decided many of them
