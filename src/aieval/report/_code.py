"""The ``code`` section of a run report (a code evaluation) as rows the renderers lay out.

Cells are plain text; each renderer escapes them for its format.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from aieval.report._document import interval, num
from aieval.sandbox import ExecutionStatus

#: The sandbox statuses, in the order the summary and the viewer show them.
STATUSES: tuple[str, ...] = get_args(ExecutionStatus)

#: How pass@k is computed (``aieval.code``), printed under its table.
ESTIMATOR = (
    "pass@k: the unbiased estimator 1 − C(n−c, k) / C(n, k) per problem (n executions, c "
    "passed), averaged over the problems with at least k executions; 95% bootstrap interval "
    "over problems."
)

PASS_AT_K_HEAD = ["metric", "value", "95% CI", "problems"]
PROBLEM_HEAD = ["problem", "c/n", *STATUSES, "first failure"]


def code_totals(code: Mapping[str, Any]) -> str:
    """``N executions: passed a, failed b, ...``."""
    statuses = code.get("statuses") or {}
    counts = ", ".join(f"{s} {statuses.get(s, 0)}" for s in STATUSES)
    return f"{code.get('executions', 0)} executions: {counts}"


def pass_at_k_rows(code: Mapping[str, Any]) -> list[list[str]]:
    """One row per k, in increasing k: ``pass@k``, value, interval, problems counted."""
    entries = (code.get("pass_at_k") or {}).items()
    return [
        [
            f"pass@{k}",
            num(v.get("value"), 3),
            interval(v.get("low"), v.get("high"), lambda x: num(x, 3)),
            str(v.get("problems", 0)),
        ]
        for k, v in sorted(entries, key=lambda item: int(item[0]))
    ]


def problem_rows(code: Mapping[str, Any]) -> list[list[str]]:
    """One row per problem: id, c/n, the count of each status, the first failure."""
    rows = []
    for p in code.get("problems") or []:
        statuses = p.get("statuses") or {}
        rows.append(
            [
                str(p.get("task_id")),
                f"{p.get('c', 0)}/{p.get('n', 0)}",
                *(str(statuses.get(s, 0)) for s in STATUSES),
                _first_failure(p.get("samples") or []),
            ]
        )
    return rows


def _first_failure(samples: list[Mapping[str, Any]]) -> str:
    for sample in samples:
        if sample.get("status") != "passed":
            return f"{sample.get('status')}: {str(sample.get('detail') or '')[:80]}"
    return ""
