"""A sample's verdict as the JSON text the store keeps, written without building its dict for
the threshold grader's plain verdicts (nearly every sample of a large run)."""

from __future__ import annotations

from aieval.core import Verdict
from aieval.store._encoding import dumps, encodable, unescaped

__all__ = ["verdict_text"]


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
    encode = unescaped
    reasons = ", ".join(
        f'{{"kind": {encode(r.kind)}, "key": {encode(r.key)}, "text": {encode(r.text)}}}'
        for r in verdict.reasons
    )
    text = (
        f'{{"passed": {"true" if verdict.passed else "false"}, "reasons": [{reasons}], '
        f'"weighted_score": {encode(verdict.weighted_score)}, "grade": null, "gates": [], '
        f'"criteria": {{}}, "grader": {encode(verdict.grader)}, "workflow": null}}'
    )
    # text UTF-8 cannot hold: the whole verdict in ASCII escapes, as dumps writes it
    return text if encodable(text) else dumps(verdict.to_dict())
