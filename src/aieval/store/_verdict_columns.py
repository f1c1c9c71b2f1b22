"""A sample's verdict as the typed columns reports read in bulk (``VERDICT_COLUMNS``)."""

from __future__ import annotations

from aieval._numbers import finite
from aieval.core import Verdict
from aieval.errors import StoreError
from aieval.store._encoding import loads

__all__ = ["stored_verdict_columns", "verdict_columns"]

#: The columns of a sample without a verdict (or with one that cannot be read).
_UNKNOWN: tuple[None, None, None] = (None, None, None)


def verdict_columns(verdict: Verdict | None) -> tuple[float | None, int | None, int | None]:
    """``(weighted_score, verdict_passed, verdict_plain)`` of ``verdict``.

    A plain verdict is its pass flag, reasons and weighted score only (the threshold grader's):
    no grade, gates, criteria or workflow evaluation, and not graded. A report reads a run of
    plain verdicts from these columns, decoding only the failed samples' reasons.
    """
    if verdict is None:
        return _UNKNOWN
    plain = not (
        verdict.graded
        or verdict.gates
        or verdict.criteria
        or verdict.workflow is not None
        or verdict.grade is not None
    )
    return finite(verdict.weighted_score), int(verdict.passed), int(plain)


def stored_verdict_columns(text: str | None) -> tuple[float | None, int | None, int | None]:
    """The columns of a verdict stored as ``text``; all NULL when there is none or it cannot be
    read (such a sample is then read, and its verdict refused, by the record path)."""
    if text is None:
        return _UNKNOWN
    try:
        return verdict_columns(Verdict.from_dict(loads(text)))
    except (StoreError, ValueError):
        return _UNKNOWN
