"""A sample's verdict as the typed columns reports read in bulk (``VERDICT_COLUMNS``,
``GRADED_COLUMNS``) and as its rows of ``sample_values`` (gates, criteria, missing criteria)."""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

from aieval._numbers import finite
from aieval.core import Verdict, WorkflowDetail, split_epoch
from aieval.errors import StoreError
from aieval.store._encoding import loads

__all__ = [
    "FIGURES_VALUES",
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
#: ``verdict_values`` of a sample whose graded figures are in ``sample_values`` too
#: (:func:`graded_figures`); 1 marks one stored with its gates and criteria only.
FIGURES_VALUES = 2
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
    # an invalid sample has no pass flag to sum: its run's reports take the record path,
    # which counts it apart
    passed = None if verdict.invalid else int(verdict.passed)
    return finite(verdict.weighted_score), passed, int(plain)


def graded_columns(verdict: Verdict | None, epoch: int | None) -> GradedColumns:
    """``(grade, epoch, verdict_values, promotion_score)``: ``verdict_values`` is
    :data:`FIGURES_VALUES` when the verdict's gates, criteria and graded figures
    (:func:`graded_figures`) are written to ``sample_values`` with it, 1 when only its gates
    and criteria are (stored before, or a figure the columns cannot hold exactly), NULL
    without a verdict: such a sample keeps its run on the record path."""
    if verdict is None:
        return None, epoch, None, None
    exact = not _counted_graded(verdict) or _figures_exact(_detail(verdict))
    level = FIGURES_VALUES if exact else 1
    return verdict.grade, epoch, level, finite(promotion_score(verdict))


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
    detail = _detail(verdict)
    if detail is not None and detail.missing_criteria:
        missing = Counter(detail.missing_criteria)
        rows += [("missing", name, float(k), None, None) for name, k in missing.items()]
    if _counted_graded(verdict) and _figures_exact(detail):
        rows += graded_figures(verdict, detail)
    return [(i, *row) for i, row in enumerate(rows)]


def graded_figures(
    verdict: Verdict, detail: WorkflowDetail | None
) -> list[tuple[str, str, float | None, None, int | None]]:
    """The rows of what a report reads from a graded verdict's detail beyond its gates and
    criteria (``report._bundle._RunTally._graded``), none for a verdict it does not count as
    graded:

    - ``workflow``: every such sample, named by its workflow ('' when the evaluation names
      none: the run's workflow then);
    - ``coverage`` (name ''): the share of the weights its weighted score covers, and
      ``unscored``: each criterion left out of it, ``value`` how many times it is listed;
      both only when the sample has a weighted score and the share is known;
    - per agent role: ``agent`` (``flag`` its steps), ``agent_failures``, ``agent_retries``
      (``flag``; written when not 0), ``agent_duration``, ``agent_tokens``, ``agent_cost``
      (``value``; written when known) and ``agent_score`` (name ``[role, score]`` in JSON,
      ``value`` the step score's mean).

    ``detail`` is the verdict's :attr:`~aieval.core.Verdict.workflow_detail` (read once by the
    caller).
    """
    if not _counted_graded(verdict):
        return []
    rows: list[tuple[str, str, float | None, None, int | None]] = [
        ("workflow", detail.workflow or "" if detail is not None else "", None, None, None),
    ]
    if detail is None:
        return rows
    coverage = detail.coverage
    if coverage is not None and coverage.share is not None and verdict.weighted_score is not None:
        rows.append(("coverage", "", coverage.share, None, None))
        rows += [
            ("unscored", n, float(k), None, None) for n, k in Counter(coverage.unscored).items()
        ]
    for role, agent in detail.agents.items():
        rows.append(("agent", role, None, None, agent.steps))
        rows += [
            (kind, role, None, None, k)
            for kind, k in (("agent_failures", agent.failures), ("agent_retries", agent.retries))
            if k
        ]
        rows += [
            (kind, role, v, None, None)
            for kind, v in (
                ("agent_duration", agent.duration_s),
                ("agent_tokens", agent.tokens),
                ("agent_cost", agent.cost_usd),
            )
            if v is not None
        ]
        rows += [
            ("agent_score", json.dumps([role, name]), v, None, None)
            for name, v in agent.scores.items()
        ]
    return rows


#: The last verdict whose detail was read, and its detail: the writer asks for a sample's
#: columns and then its rows, and reading a workflow's detail (its steps, agents, coverage) is
#: most of what a graded sample costs to write. Held by identity, so a verdict alive here is
#: never mistaken for another; replaced whole, so concurrent writers read a consistent pair.
_last_detail: tuple[Verdict | None, WorkflowDetail | None] = (None, None)


def _detail(verdict: Verdict) -> WorkflowDetail | None:
    """``verdict.workflow_detail``, read once for the columns and rows of one sample."""
    global _last_detail
    seen, detail = _last_detail
    if seen is verdict:
        return detail
    detail = verdict.workflow_detail
    _last_detail = (verdict, detail)
    return detail


def _counted_graded(verdict: Verdict) -> bool:
    """Whether a report counts ``verdict`` as graded (its grade, gates, criteria, groups)."""
    return bool(verdict.graded or verdict.gates or verdict.criteria or verdict.workflow is not None)


def _figures_exact(detail: WorkflowDetail | None) -> bool:
    """Whether the graded figures fit the typed rows exactly: every number finite (a NaN or
    an infinity keeps the run on the record path, which reads it as the detail has it) and
    every count within 31 bits (so that their sums over a run stay within the 64 bits the
    database adds in: SQLite's ``SUM`` refuses an overflow)."""
    if detail is None:
        return True
    share = detail.coverage.share if detail.coverage is not None else None
    numbers = [share] + [
        x
        for agent in detail.agents.values()
        for x in (agent.duration_s, agent.tokens, agent.cost_usd, *agent.scores.values())
    ]
    counts = [c for a in detail.agents.values() for c in (a.steps, a.failures, a.retries)]
    return all(x is None or math.isfinite(x) for x in numbers) and all(
        -(2**31) <= c < 2**31 for c in counts
    )


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
