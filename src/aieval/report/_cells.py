"""Table heads and row cells that several renderers show alike (text, Markdown, HTML, GitHub).

Each function returns a row as plain strings; ``text`` escapes the cells that hold free text
(names, ids, reasons) for the caller's format, and the renderer adds its own markup around.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from aieval._usage_figures import format_cache, format_cost, format_tokens
from aieval.report._document import (
    GRADE_ORDER,
    interval,
    interval_method,
    metric_delta,
    metric_interval,
    metric_n,
    metric_value,
    num,
    pct,
    side_pass,
)

__all__ = [
    "AGENT_HEAD",
    "CRITERION_HEAD",
    "EXAMPLE_HEAD",
    "GATE_HEAD",
    "GROUP_HEAD",
    "JUDGE_HEAD",
    "PROVENANCE_HEAD",
    "REASON_HEAD",
    "RESOURCE_HEAD",
    "agent_row",
    "change_count",
    "changes_line",
    "criterion_row",
    "example_row",
    "gate_row",
    "group_row",
    "metric_row",
    "resource_row",
]

Escape = Callable[[Any], str]

#: Per-example changes of a comparison.
EXAMPLE_HEAD = ("example", "baseline", "candidate", "delta", "changes")
#: Gate failure rates.
GATE_HEAD = ("gate", "failures", "rate", "95% CI")
#: Criteria (the terminal's and Markdown's columns; the HTML page adds sd, p10 and p90).
CRITERION_HEAD = (
    "name",
    "kind",
    "n",
    "mean",
    "95% CI",
    "p50",
    "floor",
    "below floor",
    "errors",
    "n/a",
)
#: Top failure reasons (terminal and HTML order).
REASON_HEAD = ("kind", "key", "reason", "count", "examples")
#: Judges' parse failures and consistency.
JUDGE_HEAD = ("judge", "n", "parse failures", "malformed samples", "inconsistent", "warning")
#: A group of samples (workflow, slice value).
GROUP_HEAD = ("group", "samples", "pass rate", "95% CI", "weighted score", "grades")
#: Agent roles of workflow runs.
AGENT_HEAD = (
    "agent",
    "runs",
    "steps",
    "failures",
    "retries",
    "duration",
    "tokens",
    "cost",
    "scores",
)
#: Latency, tokens and cost of a run.
RESOURCE_HEAD = ("latency mean", "p50", "p95", "max", "tokens", "cost", "retries", "cache")
#: Both runs' provenance side by side (label, baseline, candidate, flag).
PROVENANCE_HEAD = ("", "baseline", "candidate", "")


def _plain(text: Any) -> str:
    return str(text)


def change_count(doc: Mapping[str, Any], key: str) -> int:
    """The full count of a comparison's ``regressions`` or ``improvements`` (the lists may be
    cut short)."""
    return int(doc.get(f"{key}_count", len(doc[key])))


def changes_line(doc: Mapping[str, Any]) -> str:
    """A comparison's counts of changed, unchanged and unpaired examples, on one line."""
    if doc.get("method"):  # independent samples: no example is compared with itself
        return f"examples not paired ({doc['method']}): no per-example changes"
    return (
        f"{change_count(doc, 'regressions')} regressions · "
        f"{change_count(doc, 'improvements')} improvements · {doc['unchanged']} unchanged · "
        f"{doc['only_baseline_count']} only in baseline · "
        f"{doc['only_candidate_count']} only in candidate"
    )


def metric_row(
    metric: Mapping[str, Any], text: Escape = _plain, *, short: bool = False
) -> list[str]:
    """A row of a comparison's metrics table (``METRIC_HEAD``); ``short``: the interval
    method's short name, for the terminal."""
    name = str(metric["name"])
    return [
        text(metric["name"]),
        metric_value(name, metric["baseline"]),
        metric_value(name, metric["candidate"]),
        metric_delta(name, metric.get("delta")),
        metric_interval(metric),
        text(interval_method(metric, short=short)),
        text(metric_n(metric)),
    ]


def gate_row(gate: Mapping[str, Any], text: Escape = _plain) -> list[str]:
    """A row of the gate failure rates (``GATE_HEAD``)."""
    return [
        text(gate["name"]),
        f"{gate['failures']}/{gate['n']}",
        pct(gate["rate"]),
        interval(gate["low"], gate["high"], pct),
    ]


def criterion_row(criterion: Mapping[str, Any], text: Escape = _plain) -> list[str]:
    """A row of the criteria table (``CRITERION_HEAD``)."""
    c = criterion
    return [
        text(c["name"]),
        c["kind"],
        str(c["n"]),
        num(c["mean"], 3),
        interval(c["low"], c["high"], lambda v: num(v, 3)),
        num((c.get("quantiles") or {}).get("p50")),
        num(c.get("floor")),
        str(c.get("floor_violations", 0)),
        str(c.get("errors", 0)),
        str(c.get("not_applicable", 0)),
    ]


def group_row(group: Mapping[str, Any], text: Escape = _plain) -> list[str]:
    """A row of a group table (``GROUP_HEAD``): samples, pass rate, score, grades."""
    rate, grades = group["pass_rate"], group.get("grades")
    return [
        text(str(group["key"])),
        str(group["samples"]),
        pct(rate["estimate"]),
        interval(rate["low"], rate["high"], pct),
        num(group.get("weighted_score_mean")),
        " ".join(f"{g}:{grades.get(g, 0)}" for g in GRADE_ORDER) if grades else "-",
    ]


def example_row(row: Mapping[str, Any], text: Escape, label: str) -> list[str]:
    """A regression or improvement as Markdown cells (``EXAMPLE_HEAD``), its id shown as
    ``label``."""

    def side(s: Mapping[str, Any], other: Mapping[str, Any]) -> str:
        parts = [side_pass(s, other)]
        if s.get("grade"):
            parts.append(text(s["grade"]))
        if s.get("weighted_score") is not None:
            parts.append(f"{s['weighted_score']:.1f}")
        return " ".join(parts)

    delta = row.get("delta")
    return [
        label,
        side(row["baseline"], row["candidate"]),
        side(row["candidate"], row["baseline"]),
        "-" if delta is None else f"{delta:+.1f}",
        text("; ".join(row.get("changes") or [])),
    ]


def resource_row(doc: Mapping[str, Any], text: Escape = _plain, *, gap: str = "") -> list[str]:
    """A report's latency, tokens and cost (``RESOURCE_HEAD``); ``gap`` stands between a
    number of seconds and its ``s`` (the terminal writes ``1.50s``, the page ``1.50 s``)."""
    latency = doc.get("latency") or {}
    return [
        *(
            f"{num(latency.get(k))}{gap}s" if latency.get(k) is not None else "-"
            for k in ("mean", "p50", "p95", "max")
        ),
        text(format_tokens(doc.get("tokens") or {})),
        text(format_cost(doc.get("cost"))),
        str(doc.get("retries", 0)),
        text(format_cache(doc.get("cache")) or "-"),
    ]


def agent_row(agent: Mapping[str, Any], text: Escape = _plain, *, gap: str = "") -> list[str]:
    """An agent role of a workflow run (``AGENT_HEAD``); ``gap`` as in :func:`resource_row`."""
    a = agent
    scores = ", ".join(f"{k} {num(v)}" for k, v in (a.get("scores") or {}).items())
    return [
        text(a["name"]),
        str(a["runs"]),
        str(a["steps"]),
        str(a["failures"]),
        str(a["retries"]),
        f"{num(a['duration_s'], 1)}{gap}s",
        str(a["tokens"]),
        f"${num(a['cost_usd'], 4)}",
        text(scores or "-"),
    ]
