"""The state the eval author's tools share in one conversation, and its snapshot at the end.

The author gives a factory (``environment=`` of :func:`~aieval.conversations.run_conversation`,
``conversation.environment`` in an eval file): one fresh :class:`Environment` per conversation,
so concurrent conversations never share state. A tool function with a parameter named
``environment`` is given it; the target's arguments can never set that parameter. When the
conversation ends, :meth:`Environment.snapshot` is the final state, checked to be a JSON
document within :data:`~aieval.scorers.state.MAX_STATE_BYTES` and stored with the sample.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aieval.conversations._scenario import Scenario
from aieval.errors import AievalError, ConfigError
from aieval.scorers.state import state_snapshot

__all__ = ["ENVIRONMENT_PARAMETER", "Environment", "EnvironmentFactory", "FinalState", "snapshot"]

#: the tool parameter that receives the conversation's environment
ENVIRONMENT_PARAMETER = "environment"


class Environment:
    """State shared by one conversation's tools (a dict by default: ``env.state["orders"]``).

    Subclass it to hold anything else (a SQLite connection, a fake ticket system) and override
    :meth:`snapshot` to say what its final state is, as a JSON document.
    """

    def __init__(self, state: Any = None) -> None:
        self.state: Any = {} if state is None else state

    def snapshot(self) -> Any:
        """The state as a JSON document (a copy: later changes do not touch it)."""
        return copy.deepcopy(self.state)


#: the author's factory: a fresh environment for the scenario about to be played
EnvironmentFactory = Callable[[Scenario], Environment]


@dataclass(frozen=True, slots=True)
class FinalState:
    """A conversation's final state, or why it has none (``error``)."""

    value: Any = None
    error: str | None = None


def made(factory: EnvironmentFactory, scenario: Scenario) -> Environment:
    """A fresh environment for ``scenario``.

    Raises:
        ConfigError: the factory did not return an :class:`Environment`.
    """
    environment = factory(scenario)
    if not isinstance(environment, Environment):
        raise ConfigError(
            f"environment: the factory returned {type(environment).__name__} for scenario "
            f"{scenario.id!r}; return an aieval.conversations.Environment"
        )
    return environment


def snapshot(environment: Environment) -> FinalState:
    """The environment's final state, checked; a snapshot that fails or is not a JSON document
    within the cap is this sample's state error (the others are unaffected)."""
    try:
        return FinalState(state_snapshot(environment.snapshot(), "the environment's snapshot"))
    except AievalError as exc:
        return FinalState(error=str(exc))
    except Exception as exc:  # the author's snapshot failed: this sample's state error
        return FinalState(error=f"the environment's snapshot raised {type(exc).__name__}: {exc}")
