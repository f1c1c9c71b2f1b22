"""The typed verdict on one sample: passed or not, why, and the numbers behind it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aieval._numbers import finite
from aieval.core._workflow_detail import WorkflowDetail
from aieval.errors import StoreError

__all__ = ["INVALID", "CriterionValue", "GateOutcome", "Reason", "Verdict"]

#: The reason kind of an invalid sample: neither passed nor failed, left out of the pass rate.
INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason a sample did not pass.

    Attributes:
        kind: ``error`` (the target or a scorer failed), ``malformed`` (a judge's verdict could
            not be read), ``judge`` (a judge's own explanation), ``gate``, ``floor``,
            ``threshold`` or ``invalid`` (:data:`INVALID`: the sample measures something else
            than the target, e.g. a simulated user that failed fidelity; see
            :attr:`Verdict.invalid`).
        key: what failed: ``target``, a scorer, gate or criterion name, or ``weighted_score``.
        text: a short explanation.
    """

    kind: str
    key: str
    text: str


@dataclass(frozen=True, slots=True)
class GateOutcome:
    """One hard gate's result: its name, whether it held, and why not."""

    name: str
    passed: bool
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class CriterionValue:
    """One graded criterion of one example.

    Attributes:
        normalized: the normalized value in 0..1.
        adjusted: the small-sample ``adjusted_norm``, when the criterion has one.
        weight: the criterion's weight.
        floor: its critical floor (0..1), if it has one.
        floor_passed: whether the floor held (``None`` without a floor).
        kind: ``objective``, ``judge``, ``efficiency``...
    """

    normalized: float
    adjusted: float | None = None
    weight: float = 1.0
    floor: float | None = None
    floor_passed: bool | None = None
    kind: str | None = None


@dataclass(frozen=True, slots=True, init=False)
class Verdict:
    """What a :class:`~aieval.core.Grader` decided about one sample.

    Attributes:
        passed: whether the sample passed.
        reasons: why it did not (empty when it passed).
        weighted_score: 0..100, or ``None`` when nothing was scored.
        grade: the letter grade, for graders that give one (workflow grading).
        gates: the hard gates checked, in order.
        criteria: graded criteria by name.
        grader: the name of the grader that decided.
        workflow: the workflow grader's full evaluation (its stored form), else ``None``;
            :attr:`workflow_detail` reads it typed.
        weights: the weights other than 1 the weighted score gave scorers (by score name);
            empty when every scorer weighed 1.
    """

    passed: bool
    reasons: tuple[Reason, ...] = ()
    weighted_score: float | None = None
    grade: str | None = None
    gates: tuple[GateOutcome, ...] = ()
    criteria: Mapping[str, CriterionValue] = field(default_factory=dict, hash=False)
    grader: str = "threshold"
    workflow: Mapping[str, Any] | None = field(default=None, hash=False)
    weights: Mapping[str, float] = field(default_factory=dict, hash=False)

    def __init__(
        self,
        passed: bool,
        reasons: tuple[Reason, ...] = (),
        weighted_score: float | None = None,
        grade: str | None = None,
        gates: tuple[GateOutcome, ...] = (),
        criteria: Mapping[str, CriterionValue] | None = None,
        grader: str = "threshold",
        workflow: Mapping[str, Any] | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> None:
        # the dataclass's own __init__ sets a frozen field through object.__setattr__, twice
        # the cost of its slot's setter: a run grades every sample
        _SET_PASSED(self, passed)
        _SET_REASONS(self, reasons)
        _SET_WEIGHTED_SCORE(self, weighted_score)
        _SET_GRADE(self, grade)
        _SET_GATES(self, gates)
        _SET_CRITERIA(self, {} if criteria is None else criteria)
        _SET_GRADER(self, grader)
        _SET_WORKFLOW(self, workflow)
        _SET_WEIGHTS(self, {} if weights is None else weights)

    @property
    def invalid(self) -> bool:
        """Whether the sample is invalid (a reason of kind :data:`INVALID`): it neither passed
        nor failed, and runs and reports count it apart, out of the pass rate."""
        return any(r.kind == INVALID for r in self.reasons)

    @property
    def graded(self) -> bool:
        """Whether the grader gave a letter grade (the sample counts in grade distributions)."""
        return self.grade is not None

    @property
    def workflow_detail(self) -> WorkflowDetail | None:
        """The :attr:`workflow` detail as a typed view (``None`` without one)."""
        return WorkflowDetail.of(self.workflow) if isinstance(self.workflow, Mapping) else None

    @property
    def gate_map(self) -> dict[str, bool]:
        """``{gate: passed}``."""
        return {g.name: g.passed for g in self.gates}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data, as stored and as the server sends it (``weights`` only when a
        scorer weighed other than 1)."""
        data = {
            "passed": self.passed,
            "reasons": [{"kind": r.kind, "key": r.key, "text": r.text} for r in self.reasons],
            "weighted_score": self.weighted_score,
            "grade": self.grade,
            "gates": [{"name": g.name, "passed": g.passed, "reason": g.reason} for g in self.gates],
            "criteria": {
                name: {
                    "normalized": c.normalized,
                    "adjusted": c.adjusted,
                    "weight": c.weight,
                    "floor": c.floor,
                    "floor_passed": c.floor_passed,
                    "kind": c.kind,
                }
                for name, c in self.criteria.items()
            },
            "grader": self.grader,
            "workflow": None if self.workflow is None else dict(self.workflow),
        }
        if self.weights:
            data["weights"] = dict(self.weights)
        return data

    @classmethod
    def from_dict(cls, data: Any, source: str = "verdict") -> Verdict:
        """The verdict stored as :meth:`to_dict`; :class:`StoreError` naming ``source`` and the
        field when it is not one."""
        if not isinstance(data, Mapping) or not isinstance(data.get("passed"), bool):
            raise StoreError(f"{source}: not a stored verdict (needs a boolean 'passed')")
        try:
            return cls(
                passed=data["passed"],
                reasons=tuple(
                    Reason(str(r["kind"]), str(r["key"]), str(r["text"]))
                    for r in data.get("reasons") or ()
                ),
                weighted_score=finite(data.get("weighted_score")),
                grade=None if data.get("grade") is None else str(data["grade"]),
                gates=tuple(
                    GateOutcome(
                        str(g["name"]),
                        bool(g["passed"]),
                        None if g.get("reason") is None else str(g["reason"]),
                    )
                    for g in data.get("gates") or ()
                ),
                criteria=criteria_of(
                    {"name": name, **c} for name, c in (data.get("criteria") or {}).items()
                ),
                grader=str(data.get("grader") or "threshold"),
                workflow=data.get("workflow"),
                weights=_weights_of(data.get("weights")),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise StoreError(f"{source}: malformed stored verdict ({exc!r})") from exc


#: The slots' setters (a frozen dataclass refuses ``setattr``; its ``__init__`` uses these).
_SET_PASSED = Verdict.__dict__["passed"].__set__
_SET_REASONS = Verdict.__dict__["reasons"].__set__
_SET_WEIGHTED_SCORE = Verdict.__dict__["weighted_score"].__set__
_SET_GRADE = Verdict.__dict__["grade"].__set__
_SET_GATES = Verdict.__dict__["gates"].__set__
_SET_CRITERIA = Verdict.__dict__["criteria"].__set__
_SET_GRADER = Verdict.__dict__["grader"].__set__
_SET_WORKFLOW = Verdict.__dict__["workflow"].__set__
_SET_WEIGHTS = Verdict.__dict__["weights"].__set__


def _weights_of(data: Any) -> dict[str, float]:
    """Stored weights: finite numbers by name (anything else is left out)."""
    if not isinstance(data, Mapping):
        return {}
    return {str(k): w for k, v in data.items() if (w := finite(v)) is not None}


def criteria_of(items: Any) -> dict[str, CriterionValue]:
    """Criteria from their stored entries (``name``, ``normalized``, ...); entries without a
    name or a finite normalized value are left out."""
    out: dict[str, CriterionValue] = {}
    for item in items or ():
        if not isinstance(item, Mapping) or "name" not in item:
            continue
        normalized = finite(item.get("normalized"))
        if normalized is None:
            continue
        floor_passed = item.get("floor_passed")
        kind = item.get("kind")
        out[str(item["name"])] = CriterionValue(
            normalized=normalized,
            adjusted=finite(item.get("adjusted")),
            weight=finite(item.get("weight")) or 0.0,
            floor=finite(item.get("floor")),
            floor_passed=None if floor_passed is None else bool(floor_passed),
            kind=None if kind is None else str(kind),
        )
    return out
