"""Per-sample evaluators: grading that plugs into the runner by name.

An evaluator reads the dataset, wraps the target and sums the run; the
:class:`~aieval.core.Grader` its ``grader(request)`` returns decides each sample's verdict (the
one grading plug-in concept: what a sample stores beside its verdict comes from its target's
:class:`~aieval.core.Output`, ``extra``). Workflow grading (a workflow
definition and a scoring profile) is one, and grading OpenTelemetry traces as workflow runs
another; the runner knows them only by their plugin names, so the dependency points one way:
evaluators import the runner, never the reverse.

A package adds an evaluator with an entry point in the ``aieval.evaluators`` group::

    [project.entry-points."aieval.evaluators"]
    mygrader = "mypackage.grading:factory"

where ``factory(request: EvaluatorRequest) -> SampleEvaluator``; ``run(evaluator="mygrader")``
then uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from aieval._tracefiles import is_trace_data
from aieval._types import Example
from aieval.core import GROUPS, Grader, GraderRequest, load_plugin, plugin_names
from aieval.errors import ConfigError
from aieval.runner._result import Aggregator
from aieval.runner._target import Target
from aieval.scorers import Scorer

__all__ = [
    "GROUP",
    "EvaluatorFactory",
    "EvaluatorRequest",
    "SampleEvaluator",
    "evaluator_for",
    "evaluator_name",
    "evaluator_scorers",
    "load_evaluator",
]

#: The entry-point group evaluators register in.
GROUP = GROUPS["evaluators"]
#: The evaluator a workflow, a profile or a folder of run logs selects.
WORKFLOW = "workflow"
#: The evaluator trace data (an OTLP file or a folder of them) selects.
TRACES = "traces"
#: The evaluator a run's ``conversation`` settings (or a replay) select.
CONVERSATION = "conversation"


@dataclass(frozen=True, slots=True)
class EvaluatorRequest:
    """What a run gives an evaluator's factory.

    Attributes:
        workflow: the run's ``workflow=`` (a file, a mapping or an object), if any.
        profile: the run's ``profile=``, if any.
        enforce_hard_gates: whether failed gates force the lowest grade.
        conversation: the run's ``conversation`` settings (the ``conversation`` evaluator's).
        replay: the stored run whose records a conversation run replays, if any.
        replay_mode: how it replays (``strict``, ``all``, ``branch``; ``None``: strict).
        store: the run's store (a :class:`~aieval.store.Store`, a location, ``True``...),
            where a replayed run is read.
        limit: the run's ``limit`` (an evaluator that reads the dataset itself applies it).
        epochs: the run's ``epochs`` (a replay holds the epochs its run recorded).
    """

    workflow: Any = None
    profile: Any = None
    enforce_hard_gates: bool = True
    conversation: Any = None
    replay: str | None = None
    replay_mode: str | None = None
    store: Any = None
    limit: int | None = None
    epochs: int = 1


class SampleEvaluator(Protocol):
    """Grades each sample of a run; the runner calls it, never the other way round."""

    def describe(self) -> dict[str, Any]:
        """What the run's stored config records about this evaluator."""
        ...

    def rows(self, dataset: Any) -> Any:
        """The dataset as the runner should read it (a folder of run logs becomes rows)."""
        ...

    def check(self, examples: Iterable[Example]) -> None:
        """Refuse, before anything runs, a dataset this evaluator cannot grade."""
        ...

    def wrap(self, target: Target | None) -> Target:
        """The target to run (``None``: outputs recorded in the rows)."""
        ...

    def grader(self, request: GraderRequest) -> Grader:
        """The grader deciding each sample's verdict."""
        ...

    def aggregator(self, scorer_names: list[str]) -> Aggregator:
        """The run-level summary (an :class:`Aggregator` that may add its own numbers)."""
        ...


EvaluatorFactory = Callable[[EvaluatorRequest], SampleEvaluator]


def evaluator_name(
    evaluator: str | None,
    workflow: Any,
    profile: Any,
    dataset: Any,
    conversation: Any = None,
    replay: str | None = None,
) -> str | None:
    """The evaluator a run uses: the one named, else ``conversation`` for conversation settings
    or a replay, else ``traces`` for trace data, else ``workflow`` for workflow runs (a
    workflow, a profile or a folder of run logs)."""
    if evaluator is not None:
        return evaluator
    if conversation is not None or replay is not None:
        return CONVERSATION
    if is_trace_data(dataset):
        return TRACES
    folder = isinstance(dataset, str | Path) and Path(dataset).is_dir()
    return WORKFLOW if workflow is not None or profile is not None or folder else None


def evaluator_for(
    evaluator: str | None,
    workflow: Any,
    profile: Any,
    dataset: Any,
    enforce_hard_gates: bool = True,
    request: EvaluatorRequest | None = None,
) -> SampleEvaluator | None:
    """The run's evaluator, built by its plugin, or ``None`` when the run has none.

    ``request``: what else the run gives the factory (conversation settings, replay, store).
    """
    more = request or EvaluatorRequest()
    name = evaluator_name(evaluator, workflow, profile, dataset, more.conversation, more.replay)
    if name is None:
        return None
    return load_evaluator(
        name,
        replace(more, workflow=workflow, profile=profile, enforce_hard_gates=enforce_hard_gates),
    )


def evaluator_scorers(evaluator: SampleEvaluator | None) -> list[Scorer]:
    """The scorers an evaluator adds to the run's (its optional ``scorers()``), e.g. the
    conversation evaluator's checks per turn and per conversation."""
    found = getattr(evaluator, "scorers", None)
    return list(found()) if callable(found) else []


def load_evaluator(name: str, request: EvaluatorRequest) -> SampleEvaluator:
    """Build the evaluator registered as ``name`` in the ``aieval.evaluators`` group.

    Raises:
        ConfigError: it has no ``grader(request)``, or still has ``sample_extra``, which runs
            no longer call (its entries would be lost without a word).
    """
    evaluator = _factory(name)(request)
    if getattr(evaluator, "sample_extra", None) is not None:
        raise ConfigError(
            f"evaluator {name!r}: sample_extra() is no longer called: decide each sample in "
            "the Grader its grader(request) returns, and put what a sample stores beside its "
            "verdict in its target's Output.extra"
        )
    if not callable(getattr(evaluator, "grader", None)):
        raise ConfigError(
            f"evaluator {name!r}: has no grader(request); an evaluator decides each sample's "
            "verdict with the Grader it returns (see aieval.core.Grader)"
        )
    return evaluator


def _factory(name: str) -> EvaluatorFactory:
    found: EvaluatorFactory | None = load_plugin(GROUP, name)
    if found is not None:
        return found
    raise ConfigError(
        f"evaluator: no evaluator named {name!r}; installed: {', '.join(plugin_names(GROUP))}. "
        f'A package adds one with an entry point in the "{GROUP}" group'
    )
