"""The "Judges" section's cells, shared by every renderer: one row per judge with labels
(agreement with 95% intervals, base rate, status), then each judge's notes and rates.

They read the ``judge_figures`` section of a report or comparison (``JudgeSummary.to_dict``
per judge, as ``aieval judges --json`` prints it), so stored JSON renders the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["JUDGE_FIGURES_HEAD", "JUDGE_FIGURES_TITLE", "judge_figure_rows", "judge_notes"]

JUDGE_FIGURES_TITLE = "Judges: agreement with reviewers (95% intervals)"
JUDGE_FIGURES_HEAD = (
    "judge",
    "status",
    "items",
    "base rate",
    "kappa judge-human",
    "kappa human-human",
    "TPR",
    "TNR",
)


def _ci(value: Mapping[str, Any] | None, missing: str = "-") -> str:
    if not value:
        return missing
    return f"{value['estimate']:.3f} ({value['low']:.3f}–{value['high']:.3f})"


def _human_human(agree: Mapping[str, Any]) -> str:
    if agree.get("human_human_kappa"):
        return _ci(agree["human_human_kappa"])
    items = agree.get("human_human_items") or 0
    if not items:
        return "n/a (one reviewer per item)"
    return f"n/a (only {items} item with two or more reviewers)"


def judge_figure_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """One row per judge that has figures (a judge without usable labels is a note)."""
    rows = []
    for judge in section.get("judges") or []:
        cert = judge.get("certification")
        if not cert:
            continue
        agree = cert["agreement"]
        undefined = agree.get("judge_human_undefined")
        kappa = f"n/a ({undefined})" if undefined else _ci(agree.get("judge_human_kappa"))
        if agree.get("weighted"):  # the notes say what is weighted and why not when it is not
            kappa = f"{kappa} weighted"
        rows.append(
            [
                str(judge["judge"]),
                str(cert["status"]),
                f"{agree['items']} ({agree['labels']} labels)",
                f"{agree['base_rate']:.3f}",
                kappa,
                _human_human(agree),
                _ci(agree.get("tpr")),
                _ci(agree.get("tnr")),
            ]
        )
    return rows


def judge_notes(section: Mapping[str, Any]) -> list[str]:
    """Per judge: its status's reason, whether the figures are design-weighted, and each run's
    raw pass rate beside the corrected one; a judge without labels says how to start."""
    lines = []
    for judge in section.get("judges") or []:
        name = str(judge["judge"])
        cert = judge.get("certification")
        if not cert:
            start = f"; start with `{judge['start']}`" if judge.get("start") else ""
            lines.append(f"{name}: no agreement figures: {judge.get('problem') or '-'}{start}")
            continue
        lines.append(f"{name} is {cert['status']}: {cert['reason']}")
        agree = cert["agreement"]
        if agree.get("weighted"):
            lines.append(
                f"{name}: kappa, TPR, TNR and base rate weighted by the review queues' design "
                "(human-human kappa and the counts are not)"
            )
        elif f"(unweighted: {agree.get('unweighted')})" not in cert["reason"]:
            lines.append(f"{name}: unweighted: {agree.get('unweighted') or '-'}")
        lines.extend(f"{name} · {_rate_line(run)}" for run in judge.get("runs") or [])
    return lines


def _rate_line(run: Mapping[str, Any]) -> str:
    # pass rates as percentages to one decimal, as the promotion rules' reasons give them, so
    # one rate reads the same in the rule and in this section
    rate = run.get("corrected")
    if not rate:
        return (
            f"run {run['run_id']}: raw pass rate {run['raw']:.1%} (n={run['judged']}); "
            f"not corrected: {run.get('refused') or '-'}"
        )
    raw = rate["raw_interval"]
    clipped = " (clipped to 0..1)" if rate.get("clipped") else ""
    return (
        f"run {run['run_id']}: raw pass rate {rate['raw']:.1%} ({raw['low']:.1%}–"
        f"{raw['high']:.1%}), corrected {rate['corrected']:.1%} ({rate['low']:.1%}–"
        f"{rate['high']:.1%}){clipped}, n={rate['n']}"
    )
