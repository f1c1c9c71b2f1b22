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
from aieval.report._tool_results import Confusion, Rate, ToolFigures, ToolRow, Unreadable

__all__ = ["MAX_TOOLS", "ToolTallies", "ToolTally"]

#: tools shown one by one (the most called first); the rest are summed in one "other" row
MAX_TOOLS = 20
#: unreadable trajectories listed by sample (all are counted)
MAX_UNREADABLE = 5


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

    def row(self, name: str | None, confidence: float) -> ToolRow:
        """The figures of these counts (``name`` ``None``: the tools summed as "other")."""
        return ToolRow(
            name=name,
            calls=self.calls,
            expected=self.expected,
            matched=self.matched,
            precision=Rate.of(self.matched, self.calls, confidence),
            recall=Rate.of(self.matched, self.expected, confidence),
            argument_errors=self.argument_errors,
            tool_errors=self.tool_errors,
            forbidden_hits=self.forbidden_hits,
            recovery=Rate.of(self.recovered_samples, self.failing_samples, confidence),
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
            tools=tuple(self.tools[n].row(n, confidence) for n in shown),
            other=other.row(None, confidence) if rest else None,
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
