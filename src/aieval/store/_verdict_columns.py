"""A sample's verdict as the typed columns reports read in bulk (``VERDICT_COLUMNS``,
``GRADED_COLUMNS``) and as its rows of ``sample_values`` (gates, criteria, missing criteria)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from aieval._numbers import finite
from aieval.core import Verdict, split_epoch
from aieval.errors import StoreError
from aieval.store._encoding import loads

__all__ = [
    "GradedColumns",
    "ValueRow",
    "graded_columns",
    "promotion_score",
    "stored_graded_columns",
    "stored_verdict_columns",
    "value_rows",
    "verdict_columns",
]

#: The columns of a sample without a verdict (or with one that cannot be read).
_UNKNOWN: tuple[None, None, None] = (None, None, None)

#: ``(grade, epoch, verdict_values, promotion_score)`` of a sample (``GRADED_COLUMNS``).
GradedColumns = tuple[str | None, int | None, int | None, float | None]
#: ``(ord, kind, name, value, floor, flag)``: a ``sample_values`` row without run and sample.
ValueRow = tuple[int, str, str, float | None, float | None, int | None]


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


def graded_columns(verdict: Verdict | None, epoch: int | None) -> GradedColumns:
    """``(grade, epoch, verdict_values, promotion_score)``: ``verdict_values`` is 1 when the
    verdict's gates and criteria are written to ``sample_values`` with it (NULL without a
    verdict: such a sample keeps its run on the record path)."""
    if verdict is None:
        return None, epoch, None, None
    return verdict.grade, epoch, 1, finite(promotion_score(verdict))


def promotion_score(verdict: Verdict) -> float | None:
    """The weighted score with each criterion's ``adjusted`` value in place of its normalized
    one where it has one (spec 4.1: promotion decisions use ``adjusted_norm``); the weighted
    score itself when no criterion has one. The same number as
    ``aieval.report.ExampleNumbers.promotion_score`` of a sample (a test holds them equal)."""
    criteria = verdict.criteria.values()
    if not any(c.adjusted is not None for c in criteria):
        return verdict.weighted_score
    total = sum(c.weight for c in criteria)
    if total <= 0:
        return verdict.weighted_score
    used = sum(
        c.weight * (c.adjusted if c.adjusted is not None else c.normalized) for c in criteria
    )
    return 100.0 * used / total


def value_rows(verdict: Verdict | None) -> list[ValueRow]:
    """The ``sample_values`` rows of ``verdict``: each gate as the report counts it (the last
    outcome of a gate named twice, as :attr:`Verdict.gate_map`), each criterion, and each
    missing criterion with how many times the workflow evaluation lists it."""
    if verdict is None or not (verdict.gates or verdict.criteria or verdict.workflow):
        return []  # a plain verdict (nearly every sample of a large run): no row
    rows: list[tuple[str, str, float | None, float | None, int | None]] = [
        ("gate", name, None, None, int(ok)) for name, ok in verdict.gate_map.items()
    ]
    for name, c in verdict.criteria.items():
        flag = None if c.floor_passed is None else int(c.floor_passed)
        rows.append(("criterion", name, float(c.normalized), finite(c.floor), flag))
    detail = verdict.workflow_detail
    if detail is not None and detail.missing_criteria:
        missing = Counter(detail.missing_criteria)
        rows += [("missing", name, float(k), None, None) for name, k in missing.items()]
    return [(i, *row) for i, row in enumerate(rows)]


def stored_verdict_columns(text: str | None) -> tuple[float | None, int | None, int | None]:
    """The columns of a verdict stored as ``text``; all NULL when there is none or it cannot be
    read (such a sample is then read, and its verdict refused, by the record path)."""
    return verdict_columns(_stored(text))


def stored_graded_columns(
    verdict: str | None, extra: str | None
) -> tuple[tuple[float | None, int | None, int | None], GradedColumns, list[ValueRow]]:
    """Every typed column and ``sample_values`` row of a sample stored with the ``verdict`` and
    ``extra`` texts (a copied or uploaded sample): read from the texts, as the writer computes
    them from the record. A verdict that cannot be read, or an epoch beyond 64 bits, leaves
    ``verdict_values`` NULL and no row (the run is then read one record at a time)."""
    typed = _stored(verdict)
    try:
        epoch = _epoch(extra)
    except OverflowError:
        typed = None
        epoch = None
    return verdict_columns(typed), graded_columns(typed, epoch), value_rows(typed)


def _stored(text: str | None) -> Verdict | None:
    if text is None:
        return None
    try:
        return Verdict.from_dict(loads(text))
    except (StoreError, ValueError):
        return None


def _epoch(extra: str | None) -> int | None:
    """The epoch a stored ``extra`` names, as the record's reader takes it (``split_epoch``).

    Raises:
        OverflowError: it is beyond what an integer column holds.
    """
    if extra is None or '"epoch"' not in extra:
        return None
    try:
        data: Any = loads(extra)
    except (StoreError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    _, epoch = split_epoch(data)
    if epoch is not None and not -(2**63) <= epoch < 2**63:
        raise OverflowError(epoch)
    return epoch
