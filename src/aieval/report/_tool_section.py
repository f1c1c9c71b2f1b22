"""The ``tools`` section of reports and comparisons, read from a stored run.

A run's section is a list: one :class:`ToolFigures` per scorer that stored trajectories. It is
absent from a run without them, so those reports are byte for byte what they were. The read is
one query for the scores whose metadata names a trajectory, whichever path built the rest of
the report (sums, columns or records), skipped when a look at the run's first samples settles
that it holds none (see :func:`run_tools`).

A comparison's section puts each run's figures side by side: per scorer both runs have, and
per tool, calls and precision and recall of each run with the change (candidate minus
baseline; each run's own Wilson interval is shown, the change is their difference, not a
paired estimate: the two runs' calls are not paired).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aieval.core import TRAJECTORY_KEY
from aieval.errors import ConfigError
from aieval.report._tool_figures import MAX_TOOLS, ToolTallies
from aieval.report._tool_results import Rate, ToolFigures, ToolRow
from aieval.store import RunRow, Store

__all__ = [
    "ComparedTools",
    "ToolChange",
    "compare_tools",
    "read_tools",
    "run_tools",
]


#: samples looked at to tell a run without trajectories without reading all of its scores
PROBE_SAMPLES = 64


def run_tools(
    store: Store, row: RunRow, confidence: float, max_tools: int = MAX_TOOLS
) -> list[ToolFigures]:
    """Each trajectory scorer's per-tool figures over the stored run (empty: none stored)."""
    if _surely_without(store, row):
        return []
    tallies = ToolTallies()
    store.trajectory_scores(row.id, tallies.add_page)
    return tallies.figures(confidence, max_tools)


def _surely_without(store: Store, row: RunRow) -> bool:
    """Whether a look at the run's first samples shows it holds no trajectory, so its scores
    need not all be read (a report from the database's sums reads none of them).

    Conclusive only when every scorer of the run (from its rollups) scored one of those
    samples with a value and no error, and none of those scores holds a trajectory: a scorer
    that stores trajectories stores one with every value it gives. Anything else (no rollups,
    a scorer not seen, an error or an n/a among them) reads every score whose metadata names
    a trajectory.
    """
    scorers = {str(r[0]) for r in store.rollup_rows(row.id, "scores")}
    first = store.first_scores(row.id, PROBE_SAMPLES)
    if not scorers or not first or not scorers <= {scorer for scorer, *_ in first}:
        return False
    return all(
        value is not None and error is None and not _names_trajectory(metadata)
        for _, value, metadata, error in first
    )


def _names_trajectory(metadata: Any) -> bool:
    if isinstance(metadata, str):
        return f'"{TRAJECTORY_KEY}"' in metadata
    return metadata is not None


def read_tools(section: Any, where: str = "tools") -> list[ToolFigures]:
    """A stored ``tools`` section (a list of entries) read back as typed figures."""
    if section is None:
        return []
    if not isinstance(section, list):
        raise ConfigError(f"{where}: expected a list of scorers' tool figures")
    return [ToolFigures.from_dict(entry, f"{where}[{i}]") for i, entry in enumerate(section)]


@dataclass(frozen=True, slots=True)
class ToolChange:
    """One tool of one scorer in both runs (a side ``None``: the tool is not shown there)."""

    scorer: str
    name: str | None
    baseline: ToolRow | None
    candidate: ToolRow | None

    @staticmethod
    def _delta(base: Rate | None, cand: Rate | None) -> float | None:
        if base is None or cand is None or base.estimate is None or cand.estimate is None:
            return None
        return cand.estimate - base.estimate

    @property
    def precision_change(self) -> float | None:
        """Candidate's precision minus the baseline's (``None``: one is not defined)."""
        return self._delta(
            None if self.baseline is None else self.baseline.precision,
            None if self.candidate is None else self.candidate.precision,
        )

    @property
    def recall_change(self) -> float | None:
        """Candidate's recall minus the baseline's (``None``: one is not defined)."""
        return self._delta(
            None if self.baseline is None else self.baseline.recall,
            None if self.candidate is None else self.candidate.recall,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "scorer": self.scorer,
            "name": self.name,
            "baseline": None if self.baseline is None else self.baseline.to_dict(),
            "candidate": None if self.candidate is None else self.candidate.to_dict(),
            "precision_change": self.precision_change,
            "recall_change": self.recall_change,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> ToolChange:
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected an object")
        name = data.get("name")
        if name is not None and not isinstance(name, str):
            raise ConfigError(f"{where}.name: expected a tool name or null")
        sides = [
            None if data.get(side) is None else ToolRow.from_dict(data[side], f"{where}.{side}")
            for side in ("baseline", "candidate")
        ]
        return cls(str(data.get("scorer")), name, sides[0], sides[1])


@dataclass(frozen=True, slots=True)
class ComparedTools:
    """The comparison's ``tools`` section: each run's figures and the per-tool changes."""

    baseline: tuple[ToolFigures, ...]
    candidate: tuple[ToolFigures, ...]
    changes: tuple[ToolChange, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": [f.to_dict() for f in self.baseline],
            "candidate": [f.to_dict() for f in self.candidate],
            "changes": [c.to_dict() for c in self.changes],
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "tools") -> ComparedTools:
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected an object")
        changes = data.get("changes")
        if not isinstance(changes, list):
            raise ConfigError(f"{where}.changes: expected a list")
        return cls(
            baseline=tuple(read_tools(data.get("baseline"), f"{where}.baseline")),
            candidate=tuple(read_tools(data.get("candidate"), f"{where}.candidate")),
            changes=tuple(
                ToolChange.from_dict(c, f"{where}.changes[{i}]") for i, c in enumerate(changes)
            ),
        )


def compare_tools(
    baseline: Sequence[ToolFigures], candidate: Sequence[ToolFigures]
) -> ComparedTools | None:
    """Both runs' figures and, per scorer and tool shown in either run, the change; ``None``
    when neither run stored trajectories."""
    if not baseline and not candidate:
        return None
    base = {f.scorer: f for f in baseline}
    changes: list[ToolChange] = []
    for cand in candidate:
        old = base.get(cand.scorer)
        if old is None:
            continue  # a scorer only one run has: its figures are shown, no change
        old_rows = {r.name: r for r in old.tools}
        new_rows = {r.name: r for r in cand.tools}
        # the candidate's order (most called first), then the tools only the baseline shows
        names = [*new_rows, *(n for n in old_rows if n not in new_rows)]
        changes.extend(ToolChange(cand.scorer, n, old_rows.get(n), new_rows.get(n)) for n in names)
        if old.other is not None or cand.other is not None:
            changes.append(ToolChange(cand.scorer, None, old.other, cand.other))
    return ComparedTools(tuple(baseline), tuple(candidate), tuple(changes))
