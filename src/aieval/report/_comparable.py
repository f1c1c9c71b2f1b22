"""What makes two runs' paired numbers comparable: the same inputs, answer keys and scorers,
and judges whose verdicts could be read; and the warnings of a comparison."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from aieval._records import SampleRecord
from aieval.report._policy_model import PromotionPolicy
from aieval.report._tally import JudgeTally
from aieval.store import RunRow

__all__ = [
    "ADDRESS",
    "comparison_warnings",
    "digest",
    "judge_shares",
    "scorer_changes",
    "tally_judges",
]

# ``repr`` of an object without its own: the address differs between processes, the object not.
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_UNSET = object()


def digest(value: Any) -> str:
    """A stable digest of a sample's input or expected answer, to tell whether two runs saw
    the same example graded against the same key."""
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def scorer_changes(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> list[str]:
    """Scorers both runs have (by name) whose stored options differ, one line per scorer.

    Runs stored without scorer options (an older store) are not held to them.

    >>> scorer_changes({"scorers": [{"name": "f1", "options": {"case_sensitive": "True"}}]},
    ...                {"scorers": [{"name": "f1", "options": {}}]})
    ['f1: case_sensitive True in the baseline, unset in the candidate']
    """
    base, cand = _options(baseline), _options(candidate)
    out = []
    for name in (n for n in base if n in cand):
        old, new = base[name], cand[name]
        differ = [
            k for k in sorted(set(old) | set(new)) if old.get(k, _UNSET) != new.get(k, _UNSET)
        ]
        if differ:
            shown = "; ".join(
                f"{k} {_shown(old, k)} in the baseline, {_shown(new, k)} in the candidate"
                for k in differ
            )
            out.append(f"{name}: {shown}")
    return out


def _options(config: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    scorers = config.get("scorers") if isinstance(config, Mapping) else None
    if not isinstance(scorers, list):
        return {}
    out = {}
    for entry in scorers:
        if isinstance(entry, Mapping) and isinstance(entry.get("options"), Mapping):
            options = entry["options"]
            out[str(entry.get("name"))] = {
                str(k): ADDRESS.sub("", str(v)) for k, v in options.items()
            }
            # the scorer's own threshold and weight decide its samples as its options do
            for key in ("threshold", "weight"):
                if key in entry:
                    out[str(entry.get("name"))][key] = str(entry[key])
    return out


def _shown(options: Mapping[str, str], key: str) -> str:
    if key not in options:
        return "unset"
    text = options[key]
    return text if len(text) <= 60 else text[:57] + "..."


def tally_judges(sample: SampleRecord, judges: dict[str, JudgeTally]) -> None:
    """Count the judge verdicts of ``sample``'s scores into ``judges`` (one tally per scorer)."""
    for name, score in sample.scores.items():
        if "parse_failures" in score.metadata:
            judges.setdefault(name, JudgeTally()).add(score.metadata, score.malformed)


def judge_shares(judges: dict[str, JudgeTally]) -> dict[str, tuple[int, int]]:
    """``{judge: (malformed verdicts, verdicts)}``, as the promotion policy takes them."""
    return {name: (j.parse_failures, j.verdicts) for name, j in judges.items()}


def comparison_warnings(
    base: RunRow, cand: RunRow, judges: dict[str, dict[str, JudgeTally]], policy: PromotionPolicy
) -> list[str]:
    """Warnings that do not decide: unfinished runs, dataset versions, judges to look at."""
    out = []
    for label, row in (("baseline", base), ("candidate", cand)):
        if row.status != "completed":
            out.append(f"the {label} run {row.id} is {row.status}; only its stored samples count")
    if base.dataset_hash and cand.dataset_hash and base.dataset_hash != cand.dataset_hash:
        out.append(
            "the runs used different dataset versions; only examples with the same id are paired"
        )
    for side, tallies in judges.items():
        for name, judge in sorted(tallies.items()):
            note = judge.to_dict(policy.pairwise_inconsistency_warning)["warning"]
            if note:
                out.append(f"{side} judge {name}: {note}")
    return out
