"""Per-tool figures of a run: calls, precision and recall per tool, the confusion matrix,
argument and tool errors, forbidden hits and tool-error recovery.

Each sample's trajectory scorer stores an :class:`aieval.core.Trajectory` in its score's
metadata under :data:`aieval.core.TRAJECTORY_KEY`. :class:`ToolTally` counts them, one scorer
at a time (two trajectory scorers pair the same calls differently: their figures are never
summed), and :meth:`ToolTally.figures` gives the typed :class:`ToolFigures` that the report's
``tools`` section is (``to_dict``) and that renderers read back (``from_dict``).

Per tool (by name): ``calls`` made, ``expected``, ``matched`` (pairs that are matches, see
:meth:`Trajectory.is_match`), precision = matched / calls and recall = matched / expected (each
a proportion of calls: Wilson interval), ``argument_errors`` (calls whose ``argument_error`` is
set, or paired with an expected call of the same name whose arguments differ; a call counts
once), ``tool_errors`` (calls whose ``error`` is set), ``forbidden_hits``, and recovery: of the
samples with at least one failed call of the tool, those that still passed. At most
:data:`MAX_TOOLS` tools are shown, the most called first; the rest are summed in one *other*
row (and row and column of the confusion matrix), and the section says how many.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aieval.core import TRAJECTORY_KEY, Trajectory
from aieval.errors import ConfigError
from aieval.report._header import pass_rate

__all__ = [
    "MAX_TOOLS",
    "Confusion",
    "Rate",
    "ToolFigures",
    "ToolRow",
    "ToolTallies",
    "ToolTally",
    "Unreadable",
]

#: tools shown one by one (the most called first); the rest are summed in one "other" row
MAX_TOOLS = 20
#: unreadable trajectories listed by sample (all are counted)
MAX_UNREADABLE = 5
#: the confusion matrix's label of a call with no counterpart (an extra or a missing call)
NONE = "(none)"
#: the label of the tools summed together past :data:`MAX_TOOLS`
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


@dataclass(slots=True)
class _Counts:
    """The running counts of one tool (or of the tools summed as "other")."""

    calls: int = 0
    expected: int = 0
    matched: int = 0
    argument_errors: int = 0
    tool_errors: int = 0
    forbidden_hits: int = 0
    failing_samples: int = 0
    recovered_samples: int = 0

    def add(self, other: _Counts) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


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

    @classmethod
    def of(cls, name: str | None, counts: _Counts, confidence: float) -> ToolRow:
        return cls(
            name=name,
            calls=counts.calls,
            expected=counts.expected,
            matched=counts.matched,
            precision=Rate.of(counts.matched, counts.calls, confidence),
            recall=Rate.of(counts.matched, counts.expected, confidence),
            argument_errors=counts.argument_errors,
            tool_errors=counts.tool_errors,
            forbidden_hits=counts.forbidden_hits,
            recovery=Rate.of(counts.recovered_samples, counts.failing_samples, confidence),
        )

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
        tools: the shown tools, the most called first (at most :data:`MAX_TOOLS`).
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


@dataclass(slots=True)
class ToolTally:
    """The running counts of one trajectory scorer over a run (fill with :meth:`add`)."""

    scorer: str
    samples: int = 0
    failing_samples: int = 0
    recovered_samples: int = 0
    tools: dict[str, _Counts] = field(default_factory=dict)
    pairs: Counter[tuple[str | None, str | None]] = field(default_factory=Counter)
    #: per set of tools that failed in a sample, and whether it passed: how many samples
    failures: Counter[tuple[frozenset[str], bool]] = field(default_factory=Counter)
    unreadable: list[Unreadable] = field(default_factory=list)

    def add(self, sample_id: str, metadata: Any, passed: bool) -> None:
        """Count one sample's stored trajectory (``metadata``: the score's metadata, a mapping
        or its JSON text). One that cannot be read is counted as unreadable, with why."""
        try:
            trajectory = _trajectory(metadata)
        except ConfigError as exc:  # an old or hand-edited store: said so, never dropped
            self.unreadable.append(Unreadable(sample_id, str(exc)))
            return
        self.samples += 1
        self._count(trajectory, passed)

    def _count(self, t: Trajectory, passed: bool) -> None:
        banned = set(t.forbidden)
        bad_arguments = {i for i, call in enumerate(t.called) if call.argument_error}
        for call in t.called:
            counts = self._tool(call.name)
            counts.calls += 1
            counts.tool_errors += call.error is not None
            counts.forbidden_hits += call.name in banned
        for call in t.expected:
            self._tool(call.name).expected += 1
        for match in t.matches:
            expected = None if match.expected is None else t.expected[match.expected].name
            called = None if match.called is None else t.called[match.called].name
            self.pairs[(expected, called)] += 1
            if expected is not None and t.is_match(match):
                self._tool(expected).matched += 1
            elif expected == called and match.called is not None:
                bad_arguments.add(match.called)  # same tool, arguments differ
        if not t.matches:
            # no pairing stored (nothing expected, say): every call extra, every one missing
            self.pairs.update((None, call.name) for call in t.called)
            self.pairs.update((call.name, None) for call in t.expected)
        for i in bad_arguments:
            self._tool(t.called[i].name).argument_errors += 1
        failed = frozenset(call.name for call in t.called if call.error is not None)
        if failed:
            self.failing_samples += 1
            self.recovered_samples += passed
            self.failures[(failed, passed)] += 1
            for name in failed:
                self._tool(name).failing_samples += 1
                self._tool(name).recovered_samples += passed

    def _tool(self, name: str) -> _Counts:
        counts = self.tools.get(name)
        if counts is None:
            counts = self.tools[name] = _Counts()
        return counts

    def figures(self, confidence: float, max_tools: int = MAX_TOOLS) -> ToolFigures:
        """The scorer's figures, the ``max_tools`` most called tools shown one by one."""
        order = sorted(self.tools, key=lambda n: (-self.tools[n].calls, -self.tools[n].expected, n))
        shown, rest = order[:max_tools], order[max_tools:]
        total, other = _Counts(), _Counts()
        for name in order:
            total.add(self.tools[name])
        for name in rest:
            other.add(self.tools[name])
        # a sample with failed calls of several folded tools counts once in "other"
        folded = frozenset(rest)
        other.failing_samples = other.recovered_samples = 0
        for (failed, passed), n in self.failures.items():
            if failed & folded:
                other.failing_samples += n
                other.recovered_samples += n * passed
        return ToolFigures(
            scorer=self.scorer,
            samples=self.samples,
            calls=total.calls,
            expected=total.expected,
            matched=total.matched,
            precision=Rate.of(total.matched, total.calls, confidence),
            recall=Rate.of(total.matched, total.expected, confidence),
            tools=tuple(ToolRow.of(n, self.tools[n], confidence) for n in shown),
            other=ToolRow.of(None, other, confidence) if rest else None,
            other_tools=len(rest),
            confusion=self._confusion(shown, bool(rest)),
            recovery=Rate.of(self.recovered_samples, self.failing_samples, confidence),
            unreadable=len(self.unreadable),
            unreadable_samples=tuple(self.unreadable[:MAX_UNREADABLE]),
        )

    def _confusion(self, shown: Sequence[str], other: bool) -> Confusion:
        at = {name: i for i, name in enumerate(shown)}
        folded, none = len(shown), len(shown) + other
        size = none + 1
        grid = [[0] * size for _ in range(size)]
        for (expected, called), n in self.pairs.items():
            row = none if expected is None else at.get(expected, folded)
            col = none if called is None else at.get(called, folded)
            grid[row][col] += n
        return Confusion(tuple(shown), other, tuple(tuple(row) for row in grid))


def _trajectory(metadata: Any) -> Trajectory:
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except ValueError as exc:
            raise ConfigError(f"score metadata: not JSON ({exc})") from None
    if not isinstance(metadata, Mapping) or TRAJECTORY_KEY not in metadata:
        raise ConfigError(f"score metadata: no {TRAJECTORY_KEY!r} object")
    return Trajectory.from_dict(metadata[TRAJECTORY_KEY])


@dataclass(slots=True)
class ToolTallies:
    """One :class:`ToolTally` per scorer, filled a page of scores at a time."""

    tallies: dict[str, ToolTally] = field(default_factory=dict)

    def add_page(self, page: Iterable[tuple[str, str, Any, bool]]) -> None:
        """Count ``(sample_id, scorer, metadata, passed)`` of scores that may hold a
        trajectory (metadata without the key at its top level is none: skipped)."""
        for sample_id, scorer, metadata, passed in page:
            if metadata is None:
                continue
            if isinstance(metadata, str):
                # text that is no JSON stays text: counted unreadable, with why
                with contextlib.suppress(ValueError):
                    metadata = json.loads(metadata)
            if isinstance(metadata, Mapping) and TRAJECTORY_KEY not in metadata:
                continue  # the key's name in other text (a judge's reason), no trajectory
            tally = self.tallies.get(scorer)
            if tally is None:
                tally = self.tallies[scorer] = ToolTally(scorer)
            tally.add(sample_id, metadata, passed)

    def figures(self, confidence: float, max_tools: int = MAX_TOOLS) -> list[ToolFigures]:
        """Each scorer's figures, by scorer name; empty when no score held a trajectory."""
        return [self.tallies[n].figures(confidence, max_tools) for n in sorted(self.tallies)]


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
