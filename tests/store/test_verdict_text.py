"""The stored text of a verdict is ``dumps(verdict.to_dict())``, written piece by piece for
the threshold grader's plain verdicts."""

from __future__ import annotations

import itertools
import math
from typing import Any

from aieval.core import CriterionValue, GateOutcome, Verdict
from aieval.core._verdict import Reason
from aieval.store._encoding import dumps
from aieval.store._verdict_text import verdict_text

_REASONS: list[tuple[Reason, ...]] = [
    (),
    (Reason("threshold", "rouge_l", "rouge_l below the pass threshold 0.5"),),
    (Reason("error", "target", 'quote " back\\slash\nline é ✓'), Reason("judge", "j", "")),
    (Reason("error", "target", "lone \udc80 surrogate"),),  # stored in ASCII escapes
]
_SCORES: list[Any] = [None, 0.0, 100.0, 42.5, 1 / 3, 1e-300, 7, math.nan, math.inf]
_OTHERS: list[dict[str, Any]] = [
    {},
    {"grader": "custom é"},
    {"weights": {"m": 2.0}},
    {"grade": "B"},
    {"gates": (GateOutcome("safe", False, "no"),)},
    {"criteria": {"c": CriterionValue(0.5)}},
    {"workflow": {"k": [1]}},
]


def test_the_text_is_dumps_of_the_dict() -> None:
    for passed, reasons, score, other in itertools.product(
        (True, False), _REASONS, _SCORES, _OTHERS
    ):
        verdict = Verdict(passed, reasons, weighted_score=score, **other)
        assert verdict_text(verdict) == dumps(verdict.to_dict())
