"""Stage contracts: the types every stage of a run hands to the next, and the plug-in seams.

This package imports nothing of aieval but :mod:`aieval.errors` and leaf helpers, so every
other package may import it.
"""

from aieval.core._conversation import (
    Conversation,
    ConversationOutcome,
    Role,
    StopReason,
    ToolCall,
    Turn,
    TurnSource,
)
from aieval.core._counts import MAX_COUNT, count_out_of_range, drop_unstorable_counts
from aieval.core._coverage import ScorerCoverage, coverage_note, low_coverage
from aieval.core._example import ROW_CHECK_PREFIX, Example, RowCheck, Score
from aieval.core._execution import EXECUTION_SETTINGS, without_execution
from aieval.core._grader import (
    DEFAULT_PASS_THRESHOLD,
    GRADER_GROUP,
    GradeInput,
    Grader,
    GraderFactory,
    GraderRequest,
    load_grader,
)
from aieval.core._observer import (
    ObserverFactory,
    ObserverOptions,
    RunFinish,
    RunObserver,
    RunStart,
    SettingChange,
)
from aieval.core._plugins import BUILTIN, GROUPS, load_plugin, load_plugins, plugin_names
from aieval.core._records import CallRecord, SampleRecord, ScoreRecord, redact_record, split_epoch
from aieval.core._review import JudgeKey, ReviewLabel
from aieval.core._target import Output, Target, Usage
from aieval.core._threshold import ThresholdGrader, scorer_reasons, ungraded_score
from aieval.core._trajectory import TRAJECTORY_KEY, ToolMatch, ToolUse, Trajectory
from aieval.core._verdict import INVALID, CriterionValue, GateOutcome, Reason, Verdict
from aieval.core._workflow_detail import (
    AgentDetail,
    StepDetail,
    ToolCallDetail,
    WeightCoverage,
    WorkflowDetail,
)

__all__ = [
    "BUILTIN",
    "DEFAULT_PASS_THRESHOLD",
    "EXECUTION_SETTINGS",
    "GRADER_GROUP",
    "GROUPS",
    "INVALID",
    "MAX_COUNT",
    "ROW_CHECK_PREFIX",
    "TRAJECTORY_KEY",
    "AgentDetail",
    "CallRecord",
    "Conversation",
    "ConversationOutcome",
    "CriterionValue",
    "Example",
    "GateOutcome",
    "GradeInput",
    "Grader",
    "GraderFactory",
    "GraderRequest",
    "JudgeKey",
    "ObserverFactory",
    "ObserverOptions",
    "Output",
    "Reason",
    "ReviewLabel",
    "Role",
    "RowCheck",
    "RunFinish",
    "RunObserver",
    "RunStart",
    "SampleRecord",
    "Score",
    "ScoreRecord",
    "ScorerCoverage",
    "SettingChange",
    "StepDetail",
    "StopReason",
    "Target",
    "ThresholdGrader",
    "ToolCall",
    "ToolCallDetail",
    "ToolMatch",
    "ToolUse",
    "Trajectory",
    "Turn",
    "TurnSource",
    "Usage",
    "Verdict",
    "WeightCoverage",
    "WorkflowDetail",
    "count_out_of_range",
    "coverage_note",
    "drop_unstorable_counts",
    "load_grader",
    "load_plugin",
    "load_plugins",
    "low_coverage",
    "plugin_names",
    "redact_record",
    "scorer_reasons",
    "split_epoch",
    "ungraded_score",
    "without_execution",
]
