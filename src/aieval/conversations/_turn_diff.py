"""Where a candidate conversation first did worse than its baseline: the turn, the check, the
two values and what each side said there.

Turns are matched by their number in the record (1-based, as everywhere else): a replay keeps
the positions of its record, and two runs of one scripted scenario answer at the same numbers.
A turn check's values per turn (``NAME@min``'s metadata) are compared number by number; a
candidate answer at a number where the baseline has none is compared with the baseline's least
value of that check. A check without values per turn (a conversation check, ``goal_reached``,
``final_state``, a gate, the pass flag) that got worse is placed at the first turn where the
two conversations said something different (else the candidate's last turn), and a candidate
conversation that failed where the baseline's did not at the turn it could not make.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aieval.core import Conversation, SampleRecord, Turn

__all__ = [
    "SAID_LIMIT",
    "CheckValues",
    "TurnRegression",
    "did_worse",
    "first_regressed_turn",
    "said",
]

#: the most characters of a turn shown beside a regression (the record keeps it whole)
SAID_LIMIT = 160


@dataclass(frozen=True, slots=True)
class CheckValues:
    """One side's checks of one conversation.

    Attributes:
        values: each score's value by name (``None``: not applicable or failed).
        per_turn: each turn check's values by turn number (from ``NAME@min``'s metadata).
        passed: the sample's pass flag.
        gates: the graded verdict's gates (``{name: held}``), if any.
        error: the conversation's failure (the sample's error), if it failed.
    """

    values: Mapping[str, float | None] = field(default_factory=dict)
    per_turn: Mapping[str, Mapping[int, float]] = field(default_factory=dict)
    passed: bool = True
    gates: Mapping[str, bool] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True, slots=True)
class TurnRegression:
    """The first turn where the candidate did worse, and how.

    Attributes:
        turn: the turn's number in the candidate's record (1-based).
        exchange: which exchange of the candidate's conversation that turn belongs to: the
            number of user turns up to it (the assistant's first answer is in exchange 1;
            ``0`` before any user turn).
        check: the check (a turn check by its name, else the score, ``gate:NAME``, ``passed``
            or ``error``).
        baseline: the baseline's value there (``None``: it had none).
        candidate: the candidate's value there.
        baseline_said: the baseline's turn at that number, cut to :data:`SAID_LIMIT`
            characters (plain text: renderers escape it).
        candidate_said: the candidate's turn at that number, likewise.
    """

    turn: int
    exchange: int
    check: str
    baseline: float | None
    candidate: float | None
    baseline_said: str
    candidate_said: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "exchange": self.exchange,
            "check": self.check,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "baseline_said": self.baseline_said,
            "candidate_said": self.candidate_said,
        }


def check_values(sample: SampleRecord) -> CheckValues:
    """A stored conversation sample's checks: its scores, each turn check's values per turn
    (``NAME@min``'s metadata; entries that are not a number at a whole-number turn are left
    out), its verdict's pass flag and gates, its error."""
    per_turn: dict[str, dict[int, float]] = {}
    for name, score in sample.scores.items():
        turns = score.metadata.get("turns") if name.endswith("@min") else None
        if isinstance(turns, Mapping):
            per_turn[name.removesuffix("@min")] = {
                int(n): float(v)
                for n, v in turns.items()
                if str(n).isdigit() and isinstance(v, int | float) and not isinstance(v, bool)
            }
    verdict = sample.graded_verdict()
    values = {name: _finite(score.value) for name, score in sample.scores.items()}
    return CheckValues(values, per_turn, verdict.passed, dict(verdict.gate_map), sample.error)


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def did_worse(baseline: CheckValues, candidate: CheckValues) -> bool:
    """Whether the candidate did worse on any check, gate, turn or the pass flag."""
    return (
        _turn_drop(baseline, candidate) is not None or _whole_drop(baseline, candidate) is not None
    )


def first_regressed_turn(
    baseline: Conversation | None,
    candidate: Conversation | None,
    base_checks: CheckValues,
    cand_checks: CheckValues,
) -> TurnRegression | None:
    """The first turn where the candidate did worse than the baseline, else ``None``.

    ``baseline`` and ``candidate`` are the two records (``None``: unreadable; the turns are then
    shown empty); the checks are what each side scored.
    """
    found: tuple[int, str, float | None, float | None] | None
    found = _turn_drop(base_checks, cand_checks)
    if found is None:
        whole = _whole_drop(base_checks, cand_checks)
        if whole is None:
            return None
        check, b_value, c_value = whole
        if check == "error" and candidate is not None:
            turn = len(candidate.turns) + 1  # the turn it could not make
        else:
            turn = _first_difference(baseline, candidate)
        found = (turn, check, b_value, c_value)
    turn, check, b_value, c_value = found
    return TurnRegression(
        turn,
        _exchange(candidate, turn),
        check,
        b_value,
        c_value,
        _said_at(baseline, turn),
        _said_at(candidate, turn),
    )


def _exchange(record: Conversation | None, turn: int) -> int:
    if record is None:
        return 0
    return sum(1 for t in record.turns[:turn] if t.role == "user")


def said(turn: Turn) -> str:
    """What a turn said, on one line and short: ``role: content``, an assistant's tool calls
    as ``-> name(arguments)``."""
    parts = [turn.content] if turn.content else []
    parts += [f"-> {call.name}({call.arguments})" for call in turn.tool_calls]
    text = f"{turn.role}: " + " ".join(" ".join(parts).split())
    return text if len(text) <= SAID_LIMIT else text[: SAID_LIMIT - 1] + "…"


def _said_at(record: Conversation | None, turn: int) -> str:
    if record is None:
        return "(record unreadable)"
    if 1 <= turn <= len(record.turns):
        return said(record.turns[turn - 1])
    if record.outcome.failure:
        return _short(f"failed: {record.outcome.failure}")
    return "(no turn)"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SAID_LIMIT else text[: SAID_LIMIT - 1] + "…"


def _turn_drop(
    baseline: CheckValues, candidate: CheckValues
) -> tuple[int, str, float | None, float] | None:
    """The earliest turn where a turn check's value dropped (ties: the check first by name)."""
    best: tuple[int, str, float | None, float] | None = None
    for name in sorted(candidate.per_turn):
        cand, base = candidate.per_turn[name], baseline.per_turn.get(name)
        if not base:
            continue
        least = min(base.values())
        for turn in sorted(cand):
            before = base.get(turn, least)
            if cand[turn] < before:
                if best is None or turn < best[0]:
                    best = (turn, name, before, cand[turn])
                break
    return best


def _whole_drop(
    baseline: CheckValues, candidate: CheckValues
) -> tuple[str, float | None, float | None] | None:
    """The first way the candidate did worse without a turn of its own: it failed, a score
    dropped (by name), a gate stopped holding, or it stopped passing."""
    if candidate.error is not None and baseline.error is None:
        return "error", None, None
    for name in sorted(candidate.values):
        before, after = baseline.values.get(name), candidate.values[name]
        if before is not None and after is not None and after < before:
            return name, before, after
    for gate in sorted(candidate.gates):
        if baseline.gates.get(gate) and not candidate.gates[gate]:
            return f"gate:{gate}", 1.0, 0.0
    if baseline.passed and not candidate.passed:
        return "passed", 1.0, 0.0
    return None


def _first_difference(baseline: Conversation | None, candidate: Conversation | None) -> int:
    """The first turn number where the two said something different (the candidate's last
    turn when they said the same)."""
    if baseline is None or candidate is None:
        return 1
    for number, (b, c) in enumerate(zip(baseline.turns, candidate.turns, strict=False), 1):
        if _key(b) != _key(c):
            return number
    if len(baseline.turns) != len(candidate.turns):
        return min(len(baseline.turns), len(candidate.turns)) + 1
    return max(len(candidate.turns), 1)


def _key(turn: Turn) -> tuple[str, str, str]:
    calls = json.dumps([(c.name, c.arguments, c.result) for c in turn.tool_calls])
    return turn.role, turn.content, calls
