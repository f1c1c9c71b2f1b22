"""Stage contracts: the types every stage of a run hands to the next, and the plug-in seams.

This package imports nothing of aieval but :mod:`aieval.errors` and leaf helpers, so every
other package may import it.
"""

from aieval.core._example import Example, Score
from aieval.core._observer import (
    ObserverFactory,
    ObserverOptions,
    RunFinish,
    RunObserver,
    RunStart,
)
from aieval.core._plugins import BUILTIN, GROUPS, load_plugin, load_plugins, plugin_names
from aieval.core._records import CallRecord, SampleRecord, ScoreRecord, redact_record
from aieval.core._target import Output, Target, Usage

__all__ = [
    "BUILTIN",
    "GROUPS",
    "CallRecord",
    "Example",
    "ObserverFactory",
    "ObserverOptions",
    "Output",
    "RunFinish",
    "RunObserver",
    "RunStart",
    "SampleRecord",
    "Score",
    "ScoreRecord",
    "Target",
    "Usage",
    "load_plugin",
    "load_plugins",
    "plugin_names",
    "redact_record",
]
