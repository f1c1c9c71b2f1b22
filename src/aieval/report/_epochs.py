"""The ``epochs`` and ``minimums`` sections of a run's report.

A run of ``epochs > 1`` answered each example several times: its report gives pass@k and pass^k
per example (from the pass flags of its answers) beside the run's means and the variance split
its summary stored. An invalid answer (a conversation whose simulated user failed fidelity)
neither passes nor fails: each example's figures are over its valid answers, and the invalid
ones are counted apart (an example with none valid has no figure). A run held to minimums
(``min_pass_rate``, ``min``) shows each with its value and whether it was met.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aieval.report._document import num, pct
from aieval.stats import pass_at_k, pass_hat_k

__all__ = [
    "COMPARE_K_HEAD",
    "COMPARE_VARIANCE_HEAD",
    "ESTIMATORS",
    "K_HEAD",
    "MINIMUM_HEAD",
    "VARIANCE_HEAD",
    "cached_split_warning",
    "epochs_section",
    "epochs_title",
    "example_head",
    "example_rows",
    "invalid_answers_note",
    "judge_noise_hints",
    "k_rows",
    "minimum_rows",
    "minimums_section",
    "side_epochs",
    "side_k_rows",
    "side_variance_rows",
    "variance_rows",
]

K_HEAD = ["k", "pass@k", "pass^k"]
VARIANCE_HEAD = ["scorer", "answers", "verdicts/answer", "answer var", "judge var", "answers'"]
MINIMUM_HEAD = ["minimum", "value", "least", "met"]
COMPARE_K_HEAD = ["k", "pass^k baseline", "pass^k candidate", "pass@k baseline", "pass@k candidate"]
COMPARE_VARIANCE_HEAD = ["run", *VARIANCE_HEAD]
#: How pass@k and pass^k are computed, printed under their table.
ESTIMATORS = (
    "per example (n answers, c passed): pass@k = 1 − C(n−c, k) / C(n, k), the chance that at "
    "least one of k answers passes; pass^k = C(c, k) / C(n, k), the chance that all k pass; "
    "averaged over the examples with at least k answers; an invalid answer (its simulated user "
    "failed fidelity) is not one of the n."
)


def epochs_section(
    metrics: Mapping[str, Any], flags: Mapping[str, list[bool | None]]
) -> dict[str, Any] | None:
    """The run's pass@k/pass^k means and variance split (as stored) and, per example (in
    dataset order), ``n`` valid answers, ``passed``, ``invalid`` (when some were) and
    pass@k/pass^k for k = 1..n; ``None`` for a run without epochs. With invalid answers, the
    section counts them (``invalid``) and the examples left with none valid
    (``invalid_examples``)."""
    stored = metrics.get("epochs")
    if not flags and not stored:
        return None
    stored = stored or {}
    n = int(stored.get("n") or max((len(f) for f in flags.values()), default=1))
    examples = []
    invalid = invalid_examples = 0
    for example_id, answers in flags.items():
        valid = [flag for flag in answers if flag is not None]
        count, passed, left_out = len(valid), sum(valid), len(answers) - len(valid)
        ks = range(1, min(count, n) + 1)
        example: dict[str, Any] = {
            "id": example_id,
            "n": count,
            "passed": passed,
            "pass_at_k": {str(k): pass_at_k(count, passed, k) for k in ks},
            "pass_hat_k": {str(k): pass_hat_k(count, passed, k) for k in ks},
        }
        if left_out:
            example["invalid"] = left_out
            invalid += left_out
            invalid_examples += not count
        examples.append(example)
    section = {
        "n": n,
        "pass_at_k": stored.get("pass_at_k") or {},
        "pass_hat_k": stored.get("pass_hat_k") or {},
        "variance": stored.get("variance") or {},
        "examples": examples,
    }
    if invalid:
        section.update(invalid=invalid, invalid_examples=invalid_examples)
    return section


def minimums_section(metrics: Mapping[str, Any]) -> dict[str, Any] | None:
    """The minimums the run was held to as its summary stored them, or ``None``."""
    stored = metrics.get("minimums")
    return dict(stored) if isinstance(stored, Mapping) else None


def epochs_title(epochs: Mapping[str, Any]) -> str:
    """``Epochs: 3 answers per example, 40 examples``, then what invalid answers were left
    out (``· 4 invalid answers (simulated user) left out, 1 example with none valid``)."""
    title = f"Epochs: {epochs['n']} answers per example, {len(epochs['examples'])} examples"
    return title + invalid_answers_note(epochs.get("invalid"), epochs.get("invalid_examples"))


def invalid_answers_note(invalid: int | None, examples: int | None) -> str:
    """`` · 4 invalid answers (simulated user) left out of pass@k and pass^k, 1 example with
    none valid``; ``""`` without invalid answers."""
    if not invalid:
        return ""
    answers = "answer" if invalid == 1 else "answers"
    note = f" · {invalid} invalid {answers} (simulated user) left out of pass@k and pass^k"
    if examples:
        note += f", {examples} example{'' if examples == 1 else 's'} with none valid"
    return note


def k_rows(epochs: Mapping[str, Any]) -> list[list[str]]:
    """One row per k: the run's mean pass@k and pass^k."""
    at, hat = epochs.get("pass_at_k") or {}, epochs.get("pass_hat_k") or {}
    return [[k, pct(at.get(k)), pct(hat.get(k))] for k in sorted(at, key=int)]


def variance_rows(epochs: Mapping[str, Any]) -> list[list[str]]:
    """One row per judged scorer: its variance split (``-`` where it cannot be known)."""
    return [
        [
            name,
            str(split.get("answers", 0)),
            num(split.get("judge_samples"), 1),
            num(split.get("answer_variance"), 4),
            num(split.get("judge_variance"), 4),
            pct(split.get("answer_share")),
        ]
        for name, split in (epochs.get("variance") or {}).items()
    ]


def example_head(epochs: Mapping[str, Any]) -> list[str]:
    """The per-example table's columns, for a run of N epochs (``pass@N``, ``pass^N``)."""
    n = epochs["n"]
    return ["example", "passed", f"pass@{n}", f"pass^{n}"]


def example_rows(epochs: Mapping[str, Any]) -> list[list[str]]:
    """Per example, least reliable first (lowest pass^n, then pass@n): passed of n, pass@n,
    pass^n at the run's n (at the example's own n when it has fewer valid answers, the
    invalid ones named); an example with no valid answer last, without figures."""
    rows = []
    for ex in epochs["examples"]:
        k = str(min(ex["n"], epochs["n"]))
        at, hat = ex["pass_at_k"].get(k), ex["pass_hat_k"].get(k)
        passed = f"{ex['passed']}/{ex['n']}"
        if ex.get("invalid"):
            passed += f" ({ex['invalid']} invalid)"
        cells = [ex["id"], passed, pct(at), pct(hat)]
        rows.append(((not ex["n"], hat or 0.0, at or 0.0), cells))
    rows.sort(key=lambda item: item[0])
    return [row for _, row in rows]


def minimum_rows(minimums: Mapping[str, Any]) -> list[list[str]]:
    """One row per minimum: the metric, its value, the least value asked, ``yes``/``NO``."""
    return [
        [
            "pass rate" if check["metric"] == "pass_rate" else str(check["metric"]),
            num(check.get("value"), 3),
            num(check.get("minimum"), 3),
            "yes" if check.get("met") else "NO",
        ]
        for check in minimums.get("checks") or []
    ]


def side_epochs(metrics: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A comparison side's epochs as its run's summary stored them: ``n`` answers per example,
    mean ``pass_at_k``/``pass_hat_k`` by k and the ``variance`` split per judged scorer;
    ``None`` for a run without epochs."""
    stored = (metrics or {}).get("epochs")
    if not isinstance(stored, Mapping) or int(stored.get("n") or 1) < 2:
        return None
    return {
        "n": int(stored["n"]),
        "pass_at_k": dict(stored.get("pass_at_k") or {}),
        "pass_hat_k": dict(stored.get("pass_hat_k") or {}),
        "variance": dict(stored.get("variance") or {}),
    }


def side_k_rows(epochs: Mapping[str, Any]) -> list[list[str]]:
    """A comparison's pass^k and pass@k of both sides by k (``-``: a side without that k)."""
    base, cand = epochs.get("baseline") or {}, epochs.get("candidate") or {}
    ks = sorted({*base.get("pass_hat_k", {}), *cand.get("pass_hat_k", {})}, key=int)
    return [
        [
            k,
            pct((base.get("pass_hat_k") or {}).get(k)),
            pct((cand.get("pass_hat_k") or {}).get(k)),
            pct((base.get("pass_at_k") or {}).get(k)),
            pct((cand.get("pass_at_k") or {}).get(k)),
        ]
        for k in ks
    ]


def side_variance_rows(epochs: Mapping[str, Any]) -> list[list[str]]:
    """Each side's variance split per judged scorer, the side's name first."""
    return [
        [side, *row]
        for side in ("baseline", "candidate")
        for row in variance_rows(epochs.get(side) or {})
    ]


#: A judge's share of a judged metric's variance above which an inconclusive comparison's hint
#: speaks of judge samples and epochs, not only of examples.
JUDGE_NOISE_SHARE = 0.5


def judge_noise_hints(epochs: Mapping[str, Any]) -> list[str]:
    """Hints for an inconclusive comparison whose judged metrics are mostly judge noise on a
    side: more examples are not the only (nor the cheapest) way to decide."""
    hints = []
    for side in ("baseline", "candidate"):
        for name, split in ((epochs.get(side) or {}).get("variance") or {}).items():
            share = split.get("judge_share")
            if share is None or share <= JUDGE_NOISE_SHARE:
                continue
            hints.append(
                f"the judge's own noise is {share:.0%} of {name}'s variance in the {side} "
                f"({num(split.get('judge_samples'), 1)} verdicts per answer): to decide, more "
                "judge samples per answer narrow the interval as well as more examples or "
                "epochs do (aieval compare's sample sizes count examples only)"
            )
    return hints


def cached_split_warning(side: str, cached: int) -> str:
    """The warning of a side whose variance split rests on judge verdicts from the cache."""
    return (
        f"the {side}'s answer/judge variance split rests on {cached} cached judge verdicts: "
        "replayed from the response cache, not fresh samples of the judge, so its judge "
        "variance may understate the judge's noise (re-run with the judge's cache off)"
    )
