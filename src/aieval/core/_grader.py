"""The grader contract: what decides a sample's :class:`~aieval.core.Verdict`, and how a run
finds a grader by name.

A package adds a grader with an entry point in the ``aieval.graders`` group::

    [project.entry-points."aieval.graders"]
    strict = "mypackage.grading:factory"

where ``factory(request: GraderRequest) -> Grader``; ``run(grader="strict")`` (or
``RunSpec(grader="strict")``) then uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from aieval._floors import DEFAULT_PASS_THRESHOLD
from aieval.core._example import Example
from aieval.core._plugins import GROUPS, load_plugin, plugin_names
from aieval.core._records import SampleRecord
from aieval.core._verdict import Verdict
from aieval.errors import ConfigError

__all__ = [
    "DEFAULT_PASS_THRESHOLD",
    "GRADER_GROUP",
    "GradeInput",
    "Grader",
    "GraderFactory",
    "GraderRequest",
    "load_grader",
]

#: The entry-point group graders register in.
GRADER_GROUP = GROUPS["graders"]


@dataclass(frozen=True, slots=True)
class GradeInput:
    """What a grader sees of one sample, after its scorers ran.

    Attributes:
        record: the sample's record (prediction, error, scores, usage).
        example: the dataset row it answered.
        value: what the target produced (a workflow run, a parsed object, the text).
        thresholds: the scorers (run-level or the row's own checks) with their own pass
            threshold, by score name; the others use the run's ``pass_threshold``.
        weights: the scorers whose weight in the weighted score is not 1, by score name.
    """

    record: SampleRecord
    example: Example
    value: Any = None
    thresholds: Mapping[str, float] = field(default_factory=dict)
    weights: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GraderRequest:
    """What a run gives a grader's factory.

    Attributes:
        pass_threshold: the run's pass threshold (0..1).
    """

    pass_threshold: float = DEFAULT_PASS_THRESHOLD


@runtime_checkable
class Grader(Protocol):
    """Decides each sample's :class:`~aieval.core.Verdict` from its record."""

    @property
    def name(self) -> str:
        """The name stored as the verdict's ``grader``."""
        ...

    def grade(self, sample: GradeInput) -> Verdict:
        """The verdict on one sample; it is stored as the sample's ``verdict``."""
        ...


GraderFactory = Callable[[GraderRequest], Grader]


def load_grader(name: str, request: GraderRequest) -> Grader:
    """Build the grader registered as ``name`` in the ``aieval.graders`` group.

    Raises:
        ConfigError: no grader of that name is installed, it cannot be loaded, or its factory
            returned no grader.
    """
    factory: GraderFactory | None = load_plugin(GRADER_GROUP, name)
    if factory is None:
        raise ConfigError(
            f"grader: no grader named {name!r}; installed: "
            f"{', '.join(plugin_names(GRADER_GROUP))}. A package adds one with an entry point "
            f'in the "{GRADER_GROUP}" group'
        )
    grader = factory(request)
    if not isinstance(grader, Grader):
        raise ConfigError(
            f"grader: {name!r}'s factory returned {type(grader).__name__}, not a Grader "
            "(an object with a name and grade(sample) -> Verdict)"
        )
    return grader
