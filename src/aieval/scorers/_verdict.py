"""Strict parsing of a judge's ``{"score": 0-10, "reason": "..."}`` verdict."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from aieval._json import DuplicateKeyError, unique_keys

__all__ = ["DuplicateKeyError", "JudgeAnswer", "load_verdict_json", "parse_verdict"]

_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(slots=True, frozen=True)
class JudgeAnswer:
    """One parsed judge answer; ``error`` is set (and ``score`` None) when it was malformed."""

    score: float | None
    reason: str
    raw: str
    error: str | None = None

    @property
    def normalized(self) -> float:
        """Score / 10, and 0.0 for a malformed verdict (as the seed requires)."""
        return 0.0 if self.score is None else self.score / 10.0


def parse_verdict(text: str, *, max_score: float = 10.0) -> JudgeAnswer:
    """Parse exactly one JSON object with a numeric ``score`` in ``0..max_score``.

    The whole answer must be that object (an enclosing Markdown code fence is tolerated).
    Anything else (no JSON, two objects, prose around it, a key given twice, a missing,
    non-numeric, boolean, NaN or out-of-range score, a truncated object) yields a
    :class:`JudgeAnswer` with ``error`` set.

    Example:
        >>> parse_verdict('{"score": 7, "reason": "mostly right"}').normalized
        0.7
        >>> parse_verdict('I give it {"score": 10}').error
        'verdict is not a single JSON object'
        >>> parse_verdict('{"score": 1, "score": 10}').error
        "verdict gives the key 'score' twice"
    """
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = load_verdict_json(body)
    except DuplicateKeyError as exc:
        return JudgeAnswer(None, "", text, str(exc))
    except ValueError:
        return JudgeAnswer(None, "", text, "verdict is not a single JSON object")
    if not isinstance(data, dict):
        return JudgeAnswer(None, "", text, "verdict is not a JSON object")
    if "score" not in data:
        return JudgeAnswer(None, "", text, "verdict has no 'score'")
    score = data["score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return JudgeAnswer(None, "", text, f"'score' must be a number, got {type(score).__name__}")
    if math.isnan(score) or not 0.0 <= score <= max_score:
        return JudgeAnswer(None, "", text, f"'score' {score!r} is outside 0..{max_score:g}")
    reason = data.get("reason", "")
    if not isinstance(reason, str):
        reason = json.dumps(reason, ensure_ascii=False)
    return JudgeAnswer(float(score), reason, text)


def load_verdict_json(body: str) -> Any:
    """``json.loads`` for judge answers: NaN/Infinity and repeated keys are errors.

    Python's ``json`` keeps the last of repeated keys; a verdict ``{"score": 1, "score": 10}``
    is ambiguous, so it raises :class:`DuplicateKeyError` (a ``ValueError``) instead.
    """
    try:
        return json.loads(body, parse_constant=_reject_constant, object_pairs_hook=unique_keys)
    except DuplicateKeyError as exc:
        # which value the judge meant is unknowable: say so in the judge's terms
        raise DuplicateKeyError(exc.key, f"verdict gives the key {exc.key!r} twice") from None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")
