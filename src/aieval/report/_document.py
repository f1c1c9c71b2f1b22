"""Turn what a renderer is given into plain report data, and format its numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from aieval.errors import ConfigError

Kind = Literal["report", "comparison"]


def as_document(obj: Any) -> dict[str, Any]:
    """The ``to_dict()`` data of a report or comparison (or the dict itself), checked for kind.

    Renderers work from this plain data so the server can render stored JSON too.

    Raises:
        ConfigError: ``obj`` is neither a report, a comparison nor the dict of either.
    """
    data = obj.to_dict() if hasattr(obj, "to_dict") else obj
    if not isinstance(data, Mapping) or data.get("kind") not in ("report", "comparison"):
        raise ConfigError(
            f"cannot render {type(obj).__name__}: pass a RunReport, a Comparison, or the dict "
            "of either (its 'kind' must be 'report' or 'comparison')"
        )
    return dict(data)


def pct(value: float | None, digits: int = 1) -> str:
    """A 0..1 rate as a percentage, ``-`` when unknown.

    >>> pct(0.1234), pct(None)
    ('12.3%', '-')
    """
    return "-" if value is None else f"{100 * value:.{digits}f}%"


def num(value: float | None, digits: int = 2) -> str:
    """A number with fixed decimals, ``-`` when unknown.

    >>> num(3.14159), num(None)
    ('3.14', '-')
    """
    return "-" if value is None else f"{value:.{digits}f}"


def signed(value: float | None, digits: int = 2) -> str:
    """A delta with its sign, ``-`` when unknown.

    >>> signed(1.5), signed(-0.25, 1)
    ('+1.50', '-0.2')
    """
    return "-" if value is None else f"{value:+.{digits}f}"


def interval(low: float | None, high: float | None, fmt: Any = num) -> str:
    """``[low, high]`` with the given formatter, ``-`` when either end is unknown.

    >>> interval(0.1, 0.3, pct)
    '[10.0%, 30.0%]'
    """
    if low is None or high is None:
        return "-"
    return f"[{fmt(low)}, {fmt(high)}]"


#: The method of a report's mean intervals, and of its rates', when a report stored before
#: intervals named their method does not say (they were these).
MEAN_DEFAULT = "percentile bootstrap"
RATE_DEFAULT = "Wilson score"


def block_interval(
    block: Mapping[str, Any], fmt: Any = num, default: str = MEAN_DEFAULT, counts: str = ""
) -> str:
    """A report block's interval with the method that drew it (and ``counts``, in the same
    brackets), ``-`` when it has none.

    >>> block_interval({"low": 0.1, "high": 0.3, "method": "Wilson score"}, pct)
    '[10.0%, 30.0%] (Wilson score)'
    >>> block_interval({"low": 0.1, "high": 0.3, "method": "Wilson score"}, pct, counts="3/15")
    '[10.0%, 30.0%] (Wilson score, 3/15)'
    >>> block_interval({"low": 61.0, "high": 64.5})
    '[61.00, 64.50] (percentile bootstrap)'
    """
    shown = interval(block.get("low"), block.get("high"), fmt)
    if shown == "-":
        return f"- ({counts})" if counts else shown
    method = block.get("method") or default
    return f"{shown} ({method}, {counts})" if counts else f"{shown} ({method})"


def methods_note(rows: Sequence[Mapping[str, Any]], default: str = MEAN_DEFAULT) -> str:
    """How the intervals of a table's rows were drawn, for its title: one method, or each
    method with the rows it drew.

    >>> methods_note([{"name": "g", "low": 0, "high": 1, "method": "Wilson score"}])
    'intervals: Wilson score'
    >>> methods_note([{"name": "f1", "low": 0, "high": 1, "method": "Student t"},
    ...               {"name": "exact", "low": 0, "high": 1, "method": "Wilson score"}])
    'intervals: Student t (f1); Wilson score (exact)'
    """
    by_method: dict[str, list[str]] = {}
    for row in rows:
        block = row.get("pass_rate", row)  # a group row's interval is its pass rate's
        if block.get("low") is not None and block.get("high") is not None:
            method = str(block.get("method") or default)
            by_method.setdefault(method, []).append(str(row.get("name", row.get("key"))))
    if len(by_method) <= 1:
        return "".join(f"intervals: {method}" for method in by_method)
    parts = [f"{method} ({', '.join(names)})" for method, names in by_method.items()]
    return "intervals: " + "; ".join(parts)


def is_rate_metric(name: str) -> bool:
    """Comparison metrics on a 0..1 scale (everything except the 0..100 weighted score)."""
    return name != "weighted_score"


def metric_value(name: str, value: float | None) -> str:
    """A comparison metric's value in its natural unit."""
    return num(value, 2) if name == "weighted_score" else num(value, 3)


def metric_delta(name: str, value: float | None) -> str:
    """A comparison metric's delta in its natural unit, signed."""
    return signed(value, 2) if name == "weighted_score" else signed(value, 3)


#: Columns of a comparison's metrics table, in every format.
METRIC_HEAD = ["metric", "baseline", "candidate", "delta", "interval", "method", "n"]


def metric_interval(metric: Mapping[str, Any]) -> str:
    """A comparison metric's interval in its natural unit, ``-`` when it has none."""
    name = str(metric["name"])
    return interval(metric.get("low"), metric.get("high"), lambda v: metric_delta(name, v))


#: Short names of the interval methods, for the terminal's narrow table.
_SHORT_METHODS = {
    "paired-proportion score test": "Tango score",
    "studentized bootstrap": "bootstrap-t",
    "paired t-test": "t-test",
    "paired percentile bootstrap": "bootstrap",
}


def interval_method(metric: Mapping[str, Any], *, short: bool = False) -> str:
    """How a comparison metric's interval was drawn, and at what confidence (``short``: the
    method's short name alone, for the terminal's narrow table; :func:`interval_kinds` says
    the rest under it).

    >>> interval_method({"low": -0.1, "high": 11.2, "method": "paired-proportion score test",
    ...                  "confidence": 0.95, "one_sided": True})
    'one-sided 95% bounds, paired-proportion score test'
    >>> interval_method({"low": 0.0, "high": 0.1, "method": "paired percentile bootstrap",
    ...                  "confidence": 0.95, "one_sided": False})
    '95% CI, paired percentile bootstrap'
    >>> interval_method({"low": -0.1, "high": 11.2, "method": "paired-proportion score test",
    ...                  "confidence": 0.95, "one_sided": True}, short=True)
    'Tango score'
    """
    if metric.get("low") is None or metric.get("high") is None:
        return "-"
    method = str(metric.get("method") or "")
    if not method:  # stored before rows named their method: all were the bootstrap's
        return "bootstrap" if short else "paired percentile bootstrap"
    confidence = float(metric.get("confidence") or 0.95)
    one_sided = bool(metric.get("one_sided"))
    if short:
        return _SHORT_METHODS.get(method, method)
    kind = f"one-sided {confidence:.0%} bounds" if one_sided else f"{confidence:.0%} CI"
    return f"{kind}, {method}"


def interval_kinds(metrics: Sequence[Mapping[str, Any]]) -> str:
    """What the intervals of the terminal's table are (its method column names only the
    method): the decision's one-sided bounds on its metrics, two-sided intervals elsewhere.

    >>> interval_kinds([{"name": "weighted_score", "low": 0, "high": 1, "method": "t",
    ...                  "confidence": 0.95, "one_sided": True},
    ...                 {"name": "f1", "low": 0, "high": 1, "method": "b", "confidence": 0.95}])
    "intervals: weighted_score: the decision's one-sided 95% bounds; the others: 95% CI"
    """
    shown = [m for m in metrics if m.get("low") is not None and m.get("high") is not None]
    decided = [m for m in shown if m.get("one_sided")]
    rest = [m for m in shown if not m.get("one_sided")]
    parts = []
    if decided:
        level = float(decided[0].get("confidence") or 0.95)
        names = ", ".join(str(m["name"]) for m in decided)
        parts.append(f"{names}: the decision's one-sided {level:.0%} bounds")
    if rest:
        level = float(rest[0].get("confidence") or 0.95)
        parts.append(f"{'the others' if decided else 'all'}: {level:.0%} CI")
    return "intervals: " + "; ".join(parts) if parts else ""


def metric_n(metric: Mapping[str, Any]) -> str:
    """A comparison metric's paired count, with the examples only one side scored.

    >>> metric_n({"n": 48, "candidate_missing": 2, "baseline_missing": 0})
    '48 (2 unscored in candidate)'
    """
    parts = [
        f"{metric[key]} unscored in {side}"
        for key, side in (("candidate_missing", "candidate"), ("baseline_missing", "baseline"))
        if metric.get(key)
    ]
    return f"{metric['n']}" + (f" ({', '.join(parts)})" if parts else "")


def side_pass(side: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    """An example's pass on one side of a regression or improvement row, measured as on the
    other side: the share of epochs that passed when either side ran epochs (a side of one
    answer passes 100% or 0%), else ``pass``/``fail``.

    >>> side_pass({"passed": True, "pass_share": 0.5}, {"passed": True})
    '50% passed'
    >>> side_pass({"passed": True}, {"passed": True, "pass_share": 0.5})
    '100% passed'
    >>> side_pass({"passed": False}, {"passed": True})
    'fail'
    """
    if side.get("pass_share") is None and other.get("pass_share") is None:
        return "pass" if side.get("passed") else "fail"
    share = side.get("pass_share")
    if share is None:
        share = 1.0 if side.get("passed") else 0.0
    return f"{float(share):.0%} passed"


def run_title(run: Mapping[str, Any]) -> str:
    """``name · model · id`` for a run header."""
    parts = [str(run.get("name") or "-")]
    if run.get("model"):
        parts.append(str(run["model"]))
    parts.append(str(run.get("id") or "-"))
    return " · ".join(parts)


def workflow_label(run: Mapping[str, Any]) -> str | None:
    """``workflow id vVERSION (profile P)`` when the run is a workflow run."""
    wf = run.get("workflow")
    if not wf:
        return None
    label = str(wf.get("id") or "-")
    if wf.get("version"):
        label += f" v{wf['version']}"
    if wf.get("profile"):
        label += f" (profile {wf['profile']})"
    return label


GRADE_ORDER = ("A", "B", "C", "D", "F")


def outcome_of(decision: Mapping[str, Any]) -> str:
    """A decision's ``promote``/``block``/``inconclusive`` (stored data may predate it)."""
    outcome = decision.get("outcome")
    if outcome in ("promote", "block", "inconclusive"):
        return str(outcome)
    return "promote" if decision.get("promote") else "block"


def rule_outcome(rule: Mapping[str, Any]) -> str:
    """A rule's ``pass``/``fail``/``inconclusive`` (stored data may predate it)."""
    outcome = rule.get("outcome")
    if outcome in ("pass", "fail", "inconclusive"):
        return str(outcome)
    return "pass" if rule.get("passed") else "fail"


def pairwise_note(judge: Mapping[str, Any]) -> str:
    """A pairwise judge's win rate excluding ties, beside the ties that are only flips.

    >>> pairwise_note({"win_rate": 0.6, "ties": 5, "inconsistent_ties": 3})
    'win rate 60.0% excl. 5 ties (3 from swapped orders disagreeing)'
    >>> pairwise_note({"parse_failures": 0})
    ''
    """
    if "ties" not in judge:
        return ""
    return (
        f"win rate {pct(judge.get('win_rate'))} excl. {judge['ties']} ties "
        f"({judge.get('inconsistent_ties', 0)} from swapped orders disagreeing)"
    )


def coverage_text(doc: Mapping[str, Any]) -> str:
    """The scorers a report's pass rate says nothing about (shown after it in brackets), or
    ``""``.

    >>> coverage_text({"low_coverage": [{"text": "cost scored nothing: n/a on all 15 samples"}]})
    'cost scored nothing: n/a on all 15 samples'
    >>> coverage_text({"pass_rate": {"invalid": 2}})
    '2 invalid (simulated user), left out of the pass rate'
    """
    notes = [str(c["text"]) for c in doc.get("low_coverage") or []]
    invalid = (doc.get("pass_rate") or {}).get("invalid")
    if invalid:
        notes.insert(0, f"{invalid} invalid (simulated user), left out of the pass rate")
    return "; ".join(notes)


def paired_counts(doc: Mapping[str, Any]) -> str:
    """What "paired" means in a comparison's header: examples both runs have (by id), and how
    many of them both scored (what the ``paired_examples`` rule counts).

    >>> paired_counts({"paired": 500, "scored_paired": 0})
    '500 examples paired by id, 0 scored in both'
    >>> paired_counts({"paired": 300, "scored_paired": 300})
    '300 examples paired by id, all scored in both'
    """
    if doc.get("method"):  # not paired: two windows of online scoring, say
        sides = (
            doc["paired"] + doc["only_baseline_count"],
            doc["paired"] + doc["only_candidate_count"],
        )
        return f"{doc['method']}: {sides[0]} baseline and {sides[1]} candidate examples"
    text = f"{doc['paired']} examples paired by id"
    if "scored_paired" in doc:
        scored = doc["scored_paired"]
        both = "all" if scored == doc["paired"] and scored else str(scored)
        text += f", {both} scored in both"
    return text


#: What a provenance row's third column says: nothing, a plain difference, or one that makes
#: the runs not comparable (the ``comparable_runs`` rule's).
PROVENANCE_FLAGS = {"same": "", "differs": "differs", "breaks": "not comparable"}


def provenance_rows(doc: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """``(label, baseline, candidate, flag)`` per provenance fact of a comparison (``-`` for a
    value not recorded; flag ``""``, ``"differs"`` or ``"not comparable"``). Empty for a
    comparison stored before provenance existed."""
    rows = []
    for row in (doc.get("provenance") or {}).get("rows") or []:
        flag = "breaks" if row.get("breaks_comparison") else "differs" if row.get("differs") else ""
        rows.append(
            (
                str(row["label"]),
                "-" if row.get("baseline") is None else str(row["baseline"]),
                "-" if row.get("candidate") is None else str(row["candidate"]),
                PROVENANCE_FLAGS[flag or "same"],
            )
        )
    return rows


def baseline_choice(doc: Mapping[str, Any]) -> tuple[str, bool] | None:
    """The line saying which baseline a comparison chose by name and why, and whether the
    choice warns (the baseline is not like-for-like); ``None`` when it was given by id."""
    choice = doc.get("baseline_choice")
    if not isinstance(choice, Mapping) or not isinstance(choice.get("line"), str):
        return None
    return choice["line"], bool(choice.get("warning"))


def not_comparable(doc: Mapping[str, Any]) -> str | None:
    """Why the runs of a comparison are not comparable (the ``comparable_runs`` rule's reason),
    or ``None``."""
    note = (doc.get("provenance") or {}).get("not_comparable")
    return str(note) if note else None


#: What a tie-break rule's number is, and which way wins.
_TIE_RULES = {
    "weighted_score": "weighted score (0-100, higher wins)",
    "gate_failures": "hard-gate failures (fewer wins)",
    "correctness": "objective correctness (0-1, higher wins)",
    "safety": "safety/validation score (0-1, higher wins)",
    "p95_latency": "p95 latency in seconds (lower wins)",
    "cost": "total cost (lower wins)",
}


def shown_tie_break(doc: Mapping[str, Any]) -> str | None:
    """The comparison's tie-break line as a renderer shows it: ``None`` when no run ranks
    first, and when the decision blocks (a ranking of near-equal runs says nothing about a
    candidate a rule has stopped)."""
    if outcome_of(doc["decision"]) == "block":
        return None
    return tie_break_line(doc.get("tie_break") or {})


def tie_break_line(tie: Mapping[str, Any]) -> str | None:
    """A comparison's tie-break in one sentence naming each run's number, or ``None`` when no
    run ranks first. A comparison stored before the numbers were kept gives its ``reason``.

    >>> tie_break_line({"winner": "candidate", "rule": "p95_latency", "reason": "",
    ...                 "baseline_value": 0.03828, "candidate_value": 0.003214})[25:]
    'p95 latency in seconds (lower wins): baseline 0.03828 vs candidate 0.003214'
    """
    if not tie.get("winner"):
        return None
    base, cand = tie.get("baseline_value"), tie.get("candidate_value")
    rule = str(tie.get("rule"))
    if base is None or cand is None:
        return f"{tie['winner']} ({rule}): {tie.get('reason')}"
    what = _TIE_RULES.get(rule, rule)
    return f"{tie['winner']} ranks first on {what}: baseline {base:.4g} vs candidate {cand:.4g}"
