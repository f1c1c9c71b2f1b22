"""A sample's verdict as the JSON text the store keeps, written without building its dict for
the threshold grader's plain verdicts (nearly every sample of a large run)."""

from __future__ import annotations

import math
from json.encoder import encode_basestring
from typing import Any

from aieval.core import Reason, Verdict
from aieval.store._encoding import dumps, encodable, unescaped

__all__ = ["plain_verdict_parts", "verdict_text"]

_INF = math.inf


def verdict_text(verdict: Verdict) -> str:
    """``dumps(verdict.to_dict())``, the same text: a plain verdict (no grade, gates, criteria,
    workflow evaluation or weights) is written piece by piece, each value by the same encoder,
    in the same order with the same separators; any other verdict through its dict."""
    if (
        type(verdict.passed) is not bool
        or verdict.grade is not None
        or verdict.gates
        or verdict.criteria
        or verdict.workflow is not None
        or verdict.weights
    ):
        return dumps(verdict.to_dict())
    reasons = ", ".join(
        f'{{"kind": {_text(r.kind)}, "key": {_text(r.key)}, "text": {_text(r.text)}}}'
        for r in verdict.reasons
    )
    text = (
        f'{{"passed": {"true" if verdict.passed else "false"}, "reasons": [{reasons}], '
        f'"weighted_score": {_number(verdict.weighted_score)}, "grade": null, "gates": [], '
        f'"criteria": {{}}, "grader": {_text(verdict.grader)}, "workflow": null}}'
    )
    # text UTF-8 cannot hold: the whole verdict in ASCII escapes, as dumps writes it
    return text if encodable(text) else dumps(verdict.to_dict())


def _text(value: Any) -> str:
    # what the encoder itself does with a string, without its per-call checks
    return encode_basestring(value) if type(value) is str else unescaped(value)


def _number(value: Any) -> str:
    # the encoder writes a finite float as its repr
    if type(value) is float and -_INF < value < _INF:
        return float.__repr__(value)
    return unescaped(value)


def plain_verdict_parts(passed: bool, reasons: tuple[Reason, ...]) -> tuple[str, str] | None:
    """The text :func:`verdict_text` writes for a plain threshold verdict with ``passed`` and
    ``reasons``, as the part before its weighted score and the part after (the score is written
    between them as its ``repr``, a finite float); ``None`` when the text would hold what UTF-8
    cannot (such a verdict goes through :func:`verdict_text` whole)."""
    listed = ", ".join(
        f'{{"kind": {_text(r.kind)}, "key": {_text(r.key)}, "text": {_text(r.text)}}}'
        for r in reasons
    )
    head = f'{{"passed": {"true" if passed else "false"}, "reasons": [{listed}], "weighted_score": '
    tail = ', "grade": null, "gates": [], "criteria": {}, "grader": "threshold", "workflow": null}'
    return (head, tail) if encodable(head) else None
