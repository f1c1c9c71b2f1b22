"""Where each run of a comparison came from, side by side: dataset version, eval file, scorers
and judges, target model and parameters, aieval version and git commit.

A difference the ``comparable_runs`` rule holds against the comparison (another rubric or judge
model under one scorer name, other inputs or answer keys) is flagged here; other differences
(the target's model, the commit) are what a comparison compares, and are shown plainly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from aieval.report._comparable import ADDRESS
from aieval.report._evidence import RuleResult
from aieval.store import RunRow

__all__ = ["JUDGE_KEYS", "ProvenanceRow", "provenance"]

#: Scorer options that identify a judge (stored with the run by ``llm_judge`` and
#: ``pairwise_judge``), each shown on its own row.
JUDGE_KEYS = (
    "judge_model",
    "prompt_version",
    "rubric_sha256",
    "criteria_sha256",
    "samples",
    "adjudication_rounds",
)


@dataclass(frozen=True, slots=True)
class ProvenanceRow:
    """One fact about both runs.

    Attributes:
        key: a stable name (``dataset_version``, ``judge:quality:judge_model``).
        label: what the row says, for people.
        baseline: the baseline's value (``None``: not recorded, an older run).
        candidate: the candidate's value.
        breaks_comparison: the difference is one the ``comparable_runs`` rule holds against
            the comparison (its decision is then at best inconclusive).
    """

    key: str
    label: str
    baseline: str | None
    candidate: str | None
    breaks_comparison: bool = False

    @property
    def differs(self) -> bool:
        """Whether both runs recorded the fact and it differs."""
        return (
            self.baseline is not None
            and self.candidate is not None
            and self.baseline != self.candidate
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data, with ``differs``."""
        return {**asdict(self), "differs": self.differs}


def provenance(base: RunRow, cand: RunRow, comparable: RuleResult) -> dict[str, Any]:
    """The ``provenance`` block of a comparison: ``rows`` (each a :class:`ProvenanceRow` as a
    dict) and ``not_comparable``, the ``comparable_runs`` rule's reason when it did not hold."""
    details = comparable.details
    changed_data = bool(details.get("changed_inputs") or details.get("changed_expected"))
    changed_scorers = {str(c).partition(": ")[0] for c in details.get("scorer_changes") or []}
    rows = []
    for key, label, b, c in _facts(base, cand):
        breaks = key == "dataset_version" and changed_data
        scorer = key.split(":")[1] if key.startswith(("scorer:", "judge:")) else None
        if scorer is not None and scorer in changed_scorers:
            breaks = b != c
        rows.append(ProvenanceRow(key, label, b, c, breaks).to_dict())
    return {
        "rows": rows,
        "not_comparable": None if comparable.passed else comparable.reason,
    }


Fact = tuple[str, str, "str | None", "str | None"]


def _facts(base: RunRow, cand: RunRow) -> Iterator[Fact]:
    both = (base, cand)
    yield _fact("dataset", "dataset", [r.dataset for r in both])
    yield _fact("dataset_version", "dataset version", [r.dataset_hash for r in both])
    files = [_mapping(r.config.get("eval_file")) for r in both]
    yield _fact("eval_file", "eval file", [f.get("path") for f in files])
    yield _fact("eval_file_sha256", "eval file digest", [_short(f.get("sha256")) for f in files])
    targets = [_mapping(r.config.get("target")) for r in both]
    yield _fact("target", "target", [_target(t) for t in targets])
    models = [r.model or t.get("model") for r, t in zip(both, targets, strict=True)]
    yield _fact("model", "target model", models)
    yield _fact("target_params", "target parameters", [_json(t.get("params")) for t in targets])
    templates = [_digest(t.get("template")) for t in targets]
    yield _fact("prompt_template", "prompt template digest", templates)
    yield from _scorer_facts(base.config, cand.config)
    yield _fact("aieval_version", "aieval version", [r.config.get("aieval_version") for r in both])
    yield _fact("git_sha", "git commit", [r.git_sha for r in both])
    yield _fact("git_branch", "git branch", [r.config.get("git_branch") for r in both])


def _scorer_facts(base: Mapping[str, Any], cand: Mapping[str, Any]) -> Iterator[Fact]:
    """Per scorer (either run's, in order): its options, and each judge identity on a row."""
    b, c = _scorers(base), _scorers(cand)
    for name in dict.fromkeys([*b, *c]):
        ob, oc = b.get(name), c.get(name)
        for key in JUDGE_KEYS:
            if (ob and key in ob) or (oc and key in oc):
                values = [None if o is None else o.get(key) for o in (ob, oc)]
                yield _fact(f"judge:{name}:{key}", f"judge {name}: {key}", values)
        plain = [None if o is None else _options(o) for o in (ob, oc)]
        yield _fact(f"scorer:{name}", f"scorer {name}", plain)


def _scorers(config: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    entries = config.get("scorers")
    out: dict[str, dict[str, str]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get("options"), Mapping):
            options = entry["options"].items()
            # an object's repr carries its address, which differs between processes
            out[str(entry.get("name"))] = {str(k): ADDRESS.sub("", str(v)) for k, v in options}
    return out


def _options(options: Mapping[str, str]) -> str:
    shown = [f"{k}={v}" for k, v in sorted(options.items()) if k not in JUDGE_KEYS]
    return ", ".join(shown) if shown else "(defaults)"


def _fact(key: str, label: str, values: list[Any]) -> Fact:
    b, c = (None if v is None else str(v) for v in values)
    return key, label, b, c


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _target(target: Mapping[str, Any]) -> str | None:
    kind, name = target.get("kind"), target.get("name")
    if kind is None and name is None:
        return None
    return f"{kind} {name}" if name is not None else str(kind)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, default=str)


def _digest(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _short(digest: Any) -> str | None:
    return digest[:16] if isinstance(digest, str) else None
