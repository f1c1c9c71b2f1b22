"""Two windows of online scoring compared as independent samples.

A window run (``online/<rule>/<window>``, stored by the online service) holds one sample per
trace scored in that window: two windows of a rule hold different traces, so pairing them by
example id would count every trace of one as missing from the other. When both runs are
windows and fewer than half of the smaller one's examples are in both, they are compared as
independent samples: the pass rate's difference with Newcombe's hybrid score interval (from
Wilson intervals), the weighted score's and each scorer's mean difference with Welch's t
interval, and no coverage rule. Each figure keeps its scale (the weighted score 0..100, a rate
or scorer value 0..1): a figure whose every value is one end of its scale or the other is a
proportion (Newcombe, in the figure's unit); a Welch interval is clipped to the difference's
possible range (minus to plus the scale), which it can pass on few, lopsided values. A window
still open (its run ``running``) is compared with a warning that its figures are partial. A
window is watched, not promoted: the decision is ``inconclusive`` with the rule
``independent_windows`` saying so (exit 3).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from aieval.report._compare_rows import ComparedParts, tie_break_row
from aieval.report._evidence import RuleResult
from aieval.report._policy import PromotionDecision, PromotionPolicy
from aieval.report._samples import ExampleNumbers, example_numbers, merge_epochs
from aieval.stats import newcombe_interval, welch_interval
from aieval.store import RunRow, Store

__all__ = ["INDEPENDENT_WINDOWS", "WINDOWS_SUMMARY", "is_window_run", "window_parts"]

#: The comparison's ``method`` (absent from a paired comparison), shown in every format.
INDEPENDENT_WINDOWS = "independent samples (online windows: different traces)"
#: The decision's summary for two windows.
WINDOWS_SUMMARY = "no promotion decision: windows are compared, not promoted"
_NAME = re.compile(r"online/[^/]+/\d{4}-\d{2}-\d{2}(T\d{2})?")

Values = Callable[[ExampleNumbers], float | None]
#: The weighted score's scale (points out of 100); a pass rate and a scorer value are 0..1.
WEIGHTED_SCALE = 100.0


def is_window_run(row: RunRow) -> bool:
    """Whether ``row`` is a window run of online scoring (its name and config mark it)."""
    return row.config.get("online") is True and _NAME.fullmatch(row.name or "") is not None


def window_parts(
    base_store: Store,
    base_row: RunRow,
    store: Store,
    cand_row: RunRow,
    policy: PromotionPolicy,
    *,
    confidence: float,
) -> ComparedParts | None:
    """The comparison of two window runs as independent samples, or ``None`` when they share
    at least half of the smaller one's examples (then they are paired as any two runs)."""
    base = _examples(base_store, base_row)
    cand = _examples(store, cand_row)
    shared = base.keys() & cand.keys()
    if 2 * len(shared) >= min(len(base), len(cand)) and shared:
        return None
    b, c = list(base.values()), list(cand.values())
    rule = RuleResult(
        "independent_windows",
        passed=False,
        inconclusive=True,
        reason=(
            f"online windows hold different traces ({len(b)} baseline, {len(c)} candidate, "
            f"{len(shared)} in both): compared as independent samples; a window is not promoted"
        ),
        details={"baseline_n": len(b), "candidate_n": len(c), "shared": len(shared)},
    )
    decision = PromotionDecision(
        promote=False,
        summary=WINDOWS_SUMMARY,
        rules=[rule],
        warnings=_open_warnings(base_row, cand_row),
        policy=policy,
        outcome="inconclusive",
    )
    return ComparedParts(
        paired=len(shared),
        only_baseline=[i for i in base if i not in cand],
        only_candidate=[i for i in cand if i not in base],
        metrics=_metrics(b, c, confidence),
        regressions=[],
        improvements=[],
        regressions_count=0,
        improvements_count=0,
        tie_break=tie_break_row(None, None),
        decision=decision,
    )


def _examples(store: Store, row: RunRow) -> dict[str, ExampleNumbers]:
    groups: dict[str, list[ExampleNumbers]] = {}
    for sample in store.iter_samples(row.id, predictions=False):
        groups.setdefault(sample.example_id, []).append(example_numbers(sample))
    return {i: merge_epochs(group, i) for i, group in groups.items()}


def _metrics(
    base: Sequence[ExampleNumbers], cand: Sequence[ExampleNumbers], confidence: float
) -> list[dict[str, Any]]:
    getters: list[tuple[str, Values, float]] = [
        ("weighted_score", lambda ex: ex.weighted_score, WEIGHTED_SCALE),
        ("pass_rate", lambda ex: ex.pass_value, 1.0),
    ]
    names = dict.fromkeys(n for ex in (*base, *cand) for n in ex.scores)
    getters += [(name, _scorer(name), 1.0) for name in names]
    return [_row(name, get, scale, base, cand, confidence) for name, get, scale in getters]


def _scorer(name: str) -> Values:
    return lambda ex: ex.scores.get(name)


def _open_warnings(base: RunRow, cand: RunRow) -> list[str]:
    """A warning for each window still open: its figures are of the traces scored so far."""
    return [
        f"the {side} window {row.name} is still open (its run is running): its figures are"
        " partial, of the traces scored so far"
        for side, row in (("baseline", base), ("candidate", cand))
        if row.status == "running"
    ]


def _row(
    name: str,
    get: Values,
    scale: float,
    base: Sequence[ExampleNumbers],
    cand: Sequence[ExampleNumbers],
    confidence: float,
) -> dict[str, Any]:
    vb = [v for v in map(get, base) if v is not None]
    vc = [v for v in map(get, cand) if v is not None]
    row: dict[str, Any] = {
        "name": name, "baseline": None, "candidate": None, "delta": None, "low": None,
        "high": None, "method": None, "n": 0, "n_baseline": len(vb), "n_candidate": len(vc),
    }  # fmt: skip
    if not vb or not vc:
        return row
    mean_b, mean_c = sum(vb) / len(vb), sum(vc) / len(vc)
    row.update(baseline=mean_b, candidate=mean_c, delta=mean_c - mean_b, n=len(vb) + len(vc))
    if _two_ends(vb, scale) and _two_ends(vc, scale):
        hits_b, hits_c = round(sum(vb) / scale), round(sum(vc) / scale)
        ci = newcombe_interval(hits_b, len(vb), hits_c, len(vc), confidence=confidence)
        low, high = ci.low * scale, ci.high * scale
        method = "Newcombe hybrid score interval (independent samples)"
    else:
        found = welch_interval(vb, vc, confidence=confidence)
        if found is None:
            return row
        # t's interval is symmetric and unbounded: on few, lopsided values it passes the
        # range a difference of two means on [0, scale] can take, so it is clipped to it
        low, high = max(found.low, -scale), min(found.high, scale)
        clipped = (low, high) != (found.low, found.high)
        method = "Welch t interval (independent samples" + (
            ", clipped to the possible range)" if clipped else ")"
        )
    row.update(low=low, high=high, method=method, confidence=confidence, one_sided=False)
    return row


def _two_ends(values: Sequence[float], scale: float) -> bool:
    """Whether every value is 0 or ``scale``: a proportion in the figure's unit."""
    return all(v in (0.0, scale) for v in values)
