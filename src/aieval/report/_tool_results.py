"""The typed per-tool figures of a run (the report's ``tools`` section entries) and how a
stored section is read back: every field checked, a malformed one a ``ConfigError`` naming it.

See :mod:`aieval.report._tool_figures` for how they are counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aieval.errors import ConfigError
from aieval.report._header import pass_rate

__all__ = ["NONE", "OTHER", "Confusion", "Rate", "ToolFigures", "ToolRow", "Unreadable"]

#: the confusion matrix's label of a call with no counterpart (an extra or a missing call)
NONE = "(none)"
#: the label of the tools summed together past the shown ones
OTHER = "(other)"


@dataclass(frozen=True, slots=True)
class Rate:
    """A proportion with its Wilson interval (``estimate`` ``None`` when ``n`` is 0)."""

    successes: int
    n: int
    estimate: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, successes: int, n: int, confidence: float) -> Rate:
        block = pass_rate(successes, n, confidence)
        return cls(successes, n, block["estimate"], block["low"], block["high"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "successes": self.successes,
            "n": self.n,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Rate:
        block = _mapping(data, where)
        return cls(
            successes=_count(block.get("successes"), f"{where}.successes"),
            n=_count(block.get("n"), f"{where}.n"),
            estimate=_share(block.get("estimate"), f"{where}.estimate"),
            low=_share(block.get("low"), f"{where}.low"),
            high=_share(block.get("high"), f"{where}.high"),
        )


@dataclass(frozen=True, slots=True)
class ToolRow:
    """The figures of one tool (``name`` ``None``: the tools summed as "other")."""

    name: str | None
    calls: int
    expected: int
    matched: int
    precision: Rate
    recall: Rate
    argument_errors: int
    tool_errors: int
    forbidden_hits: int
    recovery: Rate

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "calls": self.calls,
            "expected": self.expected,
            "matched": self.matched,
            "precision": self.precision.to_dict(),
            "recall": self.recall.to_dict(),
            "argument_errors": self.argument_errors,
            "tool_errors": self.tool_errors,
            "forbidden_hits": self.forbidden_hits,
            "recovery": self.recovery.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> ToolRow:
        row = _mapping(data, where)
        name = row.get("name")
        if name is not None and not isinstance(name, str):
            raise ConfigError(f"{where}.name: expected a tool name or null")
        return cls(
            name=name,
            calls=_count(row.get("calls"), f"{where}.calls"),
            expected=_count(row.get("expected"), f"{where}.expected"),
            matched=_count(row.get("matched"), f"{where}.matched"),
            precision=Rate.from_dict(row.get("precision"), f"{where}.precision"),
            recall=Rate.from_dict(row.get("recall"), f"{where}.recall"),
            argument_errors=_count(row.get("argument_errors"), f"{where}.argument_errors"),
            tool_errors=_count(row.get("tool_errors"), f"{where}.tool_errors"),
            forbidden_hits=_count(row.get("forbidden_hits"), f"{where}.forbidden_hits"),
            recovery=Rate.from_dict(row.get("recovery"), f"{where}.recovery"),
        )


@dataclass(frozen=True, slots=True)
class Confusion:
    """Expected tool (rows) against called tool (columns).

    The labels are the shown tools, then :data:`OTHER` when some were summed (``other``),
    then :data:`NONE`: the row ``(none)`` holds extra calls (nothing expected), the column
    ``(none)`` expected calls never made. The diagonal counts same-name pairs (whatever their
    arguments); the rest are substitutions.
    """

    names: tuple[str, ...]
    other: bool
    counts: tuple[tuple[int, ...], ...]

    @property
    def labels(self) -> tuple[str, ...]:
        """The display labels of the rows and columns, in order."""
        return (*self.names, *((OTHER,) if self.other else ()), NONE)

    def to_dict(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "other": self.other,
            "counts": [list(row) for row in self.counts],
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Confusion:
        block = _mapping(data, where)
        names = block.get("names")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(f"{where}.names: expected a list of tool names")
        other = block.get("other")
        if not isinstance(other, bool):
            raise ConfigError(f"{where}.other: expected true or false")
        size = len(names) + other + 1
        counts = block.get("counts")
        if not isinstance(counts, list) or len(counts) != size:
            raise ConfigError(f"{where}.counts: expected {size} rows")
        rows = []
        for i, row in enumerate(counts):
            if not isinstance(row, list) or len(row) != size:
                raise ConfigError(f"{where}.counts[{i}]: expected {size} counts")
            rows.append(tuple(_count(c, f"{where}.counts[{i}]") for c in row))
        return cls(tuple(names), other, tuple(rows))


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A sample whose stored trajectory could not be read, and why."""

    sample_id: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"sample_id": self.sample_id, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Unreadable:
        block = _mapping(data, where)
        return cls(str(block.get("sample_id")), str(block.get("reason") or ""))


@dataclass(frozen=True, slots=True)
class ToolFigures:
    """One trajectory scorer's per-tool figures over a run (the ``tools`` section's entry).

    Attributes:
        scorer: the scorer that stored the trajectories.
        samples: samples with a readable trajectory.
        calls, expected, matched: totals over every tool.
        precision, recall: matched over calls made, over calls expected (all tools).
        tools: the shown tools, the most called first (at most 20 by default).
        other: the other tools summed (``None`` when every tool is shown).
        other_tools: how many tools ``other`` sums.
        confusion: expected against called tool.
        recovery: samples with a failed call that still passed, over samples with one.
        unreadable: how many samples' trajectories could not be read (counted, never dropped
            silently); ``unreadable_samples`` lists the first few with the reason.
    """

    scorer: str
    samples: int
    calls: int
    expected: int
    matched: int
    precision: Rate
    recall: Rate
    tools: tuple[ToolRow, ...]
    other: ToolRow | None
    other_tools: int
    confusion: Confusion
    recovery: Rate
    unreadable: int = 0
    unreadable_samples: tuple[Unreadable, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "scorer": self.scorer,
            "samples": self.samples,
            "calls": self.calls,
            "expected": self.expected,
            "matched": self.matched,
            "precision": self.precision.to_dict(),
            "recall": self.recall.to_dict(),
            "tools": [row.to_dict() for row in self.tools],
            "other": None if self.other is None else self.other.to_dict(),
            "other_tools": self.other_tools,
            "confusion": self.confusion.to_dict(),
            "recovery": self.recovery.to_dict(),
            "unreadable": self.unreadable,
            "unreadable_samples": [u.to_dict() for u in self.unreadable_samples],
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "tools") -> ToolFigures:
        """Read a stored section entry; a malformed one raises ``ConfigError`` naming the
        field."""
        block = _mapping(data, where)
        tools = block.get("tools")
        if not isinstance(tools, list):
            raise ConfigError(f"{where}.tools: expected a list")
        other = block.get("other")
        unreadable = block.get("unreadable_samples") or []
        if not isinstance(unreadable, list):
            raise ConfigError(f"{where}.unreadable_samples: expected a list")
        return cls(
            scorer=str(block.get("scorer")),
            samples=_count(block.get("samples"), f"{where}.samples"),
            calls=_count(block.get("calls"), f"{where}.calls"),
            expected=_count(block.get("expected"), f"{where}.expected"),
            matched=_count(block.get("matched"), f"{where}.matched"),
            precision=Rate.from_dict(block.get("precision"), f"{where}.precision"),
            recall=Rate.from_dict(block.get("recall"), f"{where}.recall"),
            tools=tuple(ToolRow.from_dict(t, f"{where}.tools[{i}]") for i, t in enumerate(tools)),
            other=None if other is None else ToolRow.from_dict(other, f"{where}.other"),
            other_tools=_count(block.get("other_tools"), f"{where}.other_tools"),
            confusion=Confusion.from_dict(block.get("confusion"), f"{where}.confusion"),
            recovery=Rate.from_dict(block.get("recovery"), f"{where}.recovery"),
            unreadable=_count(block.get("unreadable"), f"{where}.unreadable"),
            unreadable_samples=tuple(
                Unreadable.from_dict(u, f"{where}.unreadable_samples[{i}]")
                for i, u in enumerate(unreadable)
            ),
        )


def _mapping(data: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected an object, got {type(data).__name__}")
    return data


def _count(value: Any, where: str) -> int:
    if type(value) is not int or value < 0:
        raise ConfigError(f"{where}: expected a count, got {value!r}")
    return value


def _share(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where}: expected a number or null, got {value!r}")
    return float(value)
