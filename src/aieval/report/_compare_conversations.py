"""The ``conversations`` section of a comparison of two runs of conversations.

Samples pair by scenario id and epoch, as any run's examples do. A conversation whose simulated
user failed fidelity (``extra["fidelity"]``) is *invalid*: it measures the simulator, not the
target, so it is left out of the verdict on either side (listed here with its scenario, epoch,
side and flags); a scenario left with no valid conversation on a side is not paired at all.
Over the scenarios paired, the section gives pass^k by side (runs of epochs), and, for each
scenario whose candidate did worse (a check, gate or pass flag that held in the baseline and
not in the candidate, a turn check's value that dropped, a failure), the first turn where it
did (:func:`aieval.conversations.first_regressed_turn`). Scores are read for every sample;
records are decoded only for the scenarios listed. Cells are plain text; renderers escape them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aieval._records import SampleRecord
from aieval.conversations import (
    CONVERSATION_KEY,
    FIDELITY_KEY,
    CheckValues,
    SimulatorFidelity,
    check_values,
    did_worse,
    first_regressed_turn,
)
from aieval.core import Conversation
from aieval.errors import ConversationError, RunNotFoundError
from aieval.stats import pass_hat_k
from aieval.store import RunRow, Store

__all__ = [
    "INVALID_HEAD",
    "MAX_LISTED",
    "PASS_HAT_HEAD",
    "REGRESSED_HEAD",
    "ConversationSides",
    "compared_section",
    "conversation_sides",
    "invalid_rows",
    "more_line",
    "pass_hat_rows",
    "regressed_rows",
    "regressed_title",
    "summary_line",
]

#: scenarios listed with their first regressed turn (the count holds them all)
MAX_LISTED = 20
#: invalid conversations listed one by one
MAX_INVALID = 50

REGRESSED_HEAD = [
    "scenario",
    "epoch",
    "turn (exchange)",
    "check",
    "baseline",
    "candidate",
    "baseline said",
    "candidate said",
]
INVALID_HEAD = ["scenario", "epoch", "side", "simulated user"]
PASS_HAT_HEAD = ["k", "pass^k baseline", "pass^k candidate"]


@dataclass(frozen=True, slots=True)
class _Sample:
    """What the comparison keeps of one stored conversation sample (not its record)."""

    sample_id: str
    scenario: str
    epoch: int
    checks: CheckValues
    invalid: str | None  # the fidelity flags, when the simulated user failed


@dataclass(slots=True)
class _Side:
    row: RunRow
    store: Store
    by_scenario: dict[str, dict[int, _Sample]] = field(default_factory=dict)
    invalid: list[_Sample] = field(default_factory=list)

    def add(self, sample: SampleRecord) -> None:
        facts = _facts(sample)
        if facts.invalid is not None:
            self.invalid.append(facts)
            return
        self.by_scenario.setdefault(facts.scenario, {})[facts.epoch] = facts


@dataclass(slots=True)
class ConversationSides:
    """Both runs' conversation samples, read once: which are left out of the verdict, and
    the section built from them (:func:`compared_section`)."""

    baseline: _Side
    candidate: _Side

    @property
    def skipped(self) -> tuple[frozenset[str], frozenset[str]]:
        """The invalid samples' ids, baseline's then candidate's: left out of the verdict."""
        return (
            frozenset(s.sample_id for s in self.baseline.invalid),
            frozenset(s.sample_id for s in self.candidate.invalid),
        )

    @property
    def unpaired(self) -> frozenset[str]:
        """Scenarios left out of both sides: an invalid conversation, and no valid one, on a
        side (they are neither paired nor "only in" one run)."""
        gone = set()
        for side in (self.baseline, self.candidate):
            gone |= {s.scenario for s in side.invalid if s.scenario not in side.by_scenario}
        return frozenset(gone)


def conversation_sides(
    base_store: Store, base_row: RunRow, store: Store, cand_row: RunRow
) -> ConversationSides | None:
    """Both sides read (scores, pass flags, fidelity; not the records), when either run is a
    run of conversations (its config has a ``conversation`` key, as every run of the
    conversation evaluator); else ``None``: other runs are compared as before, with no
    statement more."""
    if CONVERSATION_KEY not in base_row.config and CONVERSATION_KEY not in cand_row.config:
        return None
    sides = ConversationSides(_Side(base_row, base_store), _Side(cand_row, store))
    for side in (sides.baseline, sides.candidate):
        for sample in side.store.iter_samples(side.row.id, texts=False):
            if CONVERSATION_KEY in sample.extra or FIDELITY_KEY in sample.extra:
                side.add(sample)
    return sides


def _facts(sample: SampleRecord) -> _Sample:
    epoch = 0 if sample.epoch is None else sample.epoch
    return _Sample(sample.id, sample.example_id, epoch, check_values(sample), _invalid(sample))


def _invalid(sample: SampleRecord) -> str | None:
    data = sample.extra.get(FIDELITY_KEY)
    if data is None:
        return None
    try:
        fidelity = SimulatorFidelity.from_dict(data)
    except ConversationError as exc:  # an unreadable verdict is never taken for a valid one
        return f"fidelity unreadable: {exc}"
    return None if fidelity.valid else fidelity.reason()


def compared_section(sides: ConversationSides) -> dict[str, Any]:
    """The comparison's ``conversations`` section."""
    base, cand = sides.baseline, sides.candidate
    paired = [s for s in cand.by_scenario if s in base.by_scenario]
    regressed: list[tuple[_Sample, _Sample]] = []
    for scenario in paired:
        for b, c in _epoch_pairs(base.by_scenario[scenario], cand.by_scenario[scenario]):
            if did_worse(b.checks, c.checks):
                regressed.append((b, c))
                break  # one per scenario: its first epoch that did worse
    listed = [_regression(base, cand, b, c) for b, c in regressed[:MAX_LISTED]]
    invalid = [("baseline", s) for s in base.invalid] + [("candidate", s) for s in cand.invalid]
    return {
        "paired": len(paired),
        "regressed": listed,
        "regressed_total": len(regressed),
        "invalid": [
            {"scenario_id": s.scenario, "epoch": s.epoch, "side": side, "reason": s.invalid}
            for side, s in invalid[:MAX_INVALID]
        ],
        "invalid_baseline": len(base.invalid),
        "invalid_candidate": len(cand.invalid),
        "unpaired_invalid": sorted(sides.unpaired),
        "pass_hat_k": _pass_hat_k(base, cand, paired),
    }


def _epoch_pairs(
    base: dict[int, _Sample], cand: dict[int, _Sample]
) -> list[tuple[_Sample, _Sample]]:
    """A scenario's answers paired by epoch; a side with one answer (a run without epochs, or
    one valid epoch left) pairs it with each answer of the other."""
    if len(base) == 1 or len(cand) == 1:
        return [(base[b], cand[c]) for c in sorted(cand) for b in sorted(base)]
    return [(base[e], cand[e]) for e in sorted(cand) if e in base]


def _regression(base: _Side, cand: _Side, b: _Sample, c: _Sample) -> dict[str, Any]:
    found = first_regressed_turn(_record(base, b), _record(cand, c), b.checks, c.checks)
    entry: dict[str, Any] = {"scenario_id": c.scenario, "epoch": c.epoch}
    # worse() said it regressed, so a turn is always found
    entry.update(found.to_dict() if found is not None else {"turn": None, "check": None})
    return entry


def _record(side: _Side, sample: _Sample) -> Conversation | None:
    """The sample's record, decoded (``None`` when it is missing or unreadable)."""
    try:
        stored = side.store.get_sample(side.row.id, sample.sample_id)
        return Conversation.from_dict(stored.extra.get(CONVERSATION_KEY))
    except (ConversationError, RunNotFoundError):
        return None


def _pass_hat_k(base: _Side, cand: _Side, paired: list[str]) -> list[dict[str, Any]]:
    """pass^k by side over the paired scenarios' valid conversations, for k = 1 up to the most
    epochs a scenario has (each k averaged over the scenarios with at least k); empty when
    no scenario has more than one."""
    counts = {
        side: [
            (
                len(run.by_scenario[scenario]),
                sum(s.checks.passed for s in run.by_scenario[scenario].values()),
            )
            for scenario in paired
        ]
        for side, run in (("baseline", base), ("candidate", cand))
    }
    most = max((n for pairs in counts.values() for n, _ in pairs), default=0)
    if most < 2:
        return []
    rows = []
    for k in range(1, most + 1):
        row: dict[str, Any] = {"k": k}
        for side, pairs in counts.items():
            values = [pass_hat_k(n, c, k) for n, c in pairs if n >= k]
            row[side] = sum(values) / len(values) if values else None
            row[f"{side}_scenarios"] = len(values)
        rows.append(row)
    return rows


def summary_line(section: Mapping[str, Any]) -> str:
    """``N scenarios paired · M regressed · I invalid conversations (simulated user) left out
    of the verdict: ...``."""
    invalid = int(section.get("invalid_baseline", 0)) + int(section.get("invalid_candidate", 0))
    line = (
        f"{section.get('paired', 0)} scenarios paired by id and epoch · "
        f"{section.get('regressed_total', 0)} where the candidate did worse"
    )
    if not invalid:
        return line + " · no invalid conversation"
    unpaired = section.get("unpaired_invalid") or []
    line += (
        f" · {invalid} invalid conversations (the simulated user failed fidelity: "
        f"baseline {section.get('invalid_baseline', 0)}, candidate "
        f"{section.get('invalid_candidate', 0)}) left out of the verdict"
    )
    if unpaired:
        shown = ", ".join(str(s) for s in unpaired[:10])
        more = f" and {len(unpaired) - 10} more" if len(unpaired) > 10 else ""
        line += f"; scenarios not paired for it: {shown}{more}"
    return line


def regressed_title(section: Mapping[str, Any]) -> str:
    """``First regressed turn (20 of 73 scenarios)``."""
    shown, total = len(section.get("regressed") or []), section.get("regressed_total", 0)
    return f"First regressed turn ({shown} of {total} scenarios)"


def regressed_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """One row per listed scenario: scenario, epoch, turn, check, the two values, what each
    side said at that turn."""
    return [
        [
            str(r.get("scenario_id")),
            str(r.get("epoch")),
            f"{r.get('turn')} ({r.get('exchange')})",
            str(r.get("check")),
            _value(r.get("baseline")),
            _value(r.get("candidate")),
            str(r.get("baseline_said") or ""),
            str(r.get("candidate_said") or ""),
        ]
        for r in section.get("regressed") or []
    ]


def more_line(section: Mapping[str, Any]) -> str:
    """``and M more`` when scenarios were left out of the list, else empty."""
    more = int(section.get("regressed_total", 0)) - len(section.get("regressed") or [])
    return f"and {more} more" if more > 0 else ""


def invalid_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """One row per invalid conversation: scenario, epoch, side, the simulated user's flags."""
    return [
        [str(i.get("scenario_id")), str(i.get("epoch")), str(i.get("side")),
         str(i.get("reason") or "")[:200]]
        for i in section.get("invalid") or []
    ]  # fmt: skip


def pass_hat_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """pass^k by k and side over the paired scenarios."""
    return [
        [str(r["k"]), _value(r.get("baseline")), _value(r.get("candidate"))]
        for r in section.get("pass_hat_k") or []
    ]


def _value(value: Any) -> str:
    if value is None:
        return "-"
    return f"{float(value):.3g}"
