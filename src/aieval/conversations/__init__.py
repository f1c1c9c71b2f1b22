"""Conversations: multi-turn scenarios against a target, with scripted and simulated users,
tools, stop rules, and replay of recorded conversations.

A scenario is a dataset row (:func:`load_scenarios`); :func:`run_conversation` plays it
against a :class:`ChatTarget` (an OpenAI-compatible endpoint through a provider) or a Python
function, and returns an :class:`aieval.core.Conversation`; a :class:`Replay` of a recorded
conversation (stored, or read by :func:`records_from_file`) plays it again (``strict``,
``all`` or ``branch``); :func:`check_fidelity`
flags a simulated user that did not play its part; :func:`transcript_judge` judges the whole
transcript (role adherence, knowledge retention, user frustration). See docs/conversations.md.
"""

from aieval.conversations._checks import Played
from aieval.conversations._engine import (
    DEFAULT_MAX_TOOL_ROUNDS,
    GoalCheck,
    Replay,
    ReplayMode,
    run_conversation,
    run_conversations,
)
from aieval.conversations._environment import Environment, FinalState
from aieval.conversations._estimate import Estimate, estimate_calls
from aieval.conversations._evaluator import (
    ConversationEvaluator,
    ConversationRunTarget,
    estimate_run,
)
from aieval.conversations._fidelity import (
    CONVERSATION_KEY,
    FIDELITY_KEY,
    GOAL_LEAK_NGRAM,
    FidelityFlag,
    FidelityKind,
    SimulatorFidelity,
    check_fidelity,
)
from aieval.conversations._fidelity_judge import FIDELITY_JUDGE_PROMPT, judge_fidelity
from aieval.conversations._records_file import records_from_file
from aieval.conversations._scenario import (
    MAX_TURNS_LIMIT,
    Scenario,
    ScenarioChecks,
    ScenarioMessage,
    StopRules,
    ToolFixture,
    ToolResult,
    scenario_from_row,
)
from aieval.conversations._scenarios import ScenarioSet, load_scenarios
from aieval.conversations._show import transcript_lines
from aieval.conversations._target import (
    CallableTarget,
    ChatTarget,
    ConversationTarget,
    TargetReply,
    ToolSpec,
    chat_messages,
)
from aieval.conversations._tools import Tool, ToolBox
from aieval.conversations._transcript_judges import (
    TRANSCRIPT_JUDGE_PROMPT_VERSION,
    TRANSCRIPT_JUDGES,
    TRANSCRIPT_RUBRICS,
    TranscriptJudgeName,
    transcript_judge,
)
from aieval.conversations._turn_diff import (
    CheckValues,
    TurnRegression,
    check_values,
    did_worse,
    first_regressed_turn,
)
from aieval.conversations._user import DONE_MARKER, PERSONA_PROMPT, SimulatedUser, UserReply

__all__ = [
    "CONVERSATION_KEY",
    "DEFAULT_MAX_TOOL_ROUNDS",
    "DONE_MARKER",
    "FIDELITY_JUDGE_PROMPT",
    "FIDELITY_KEY",
    "GOAL_LEAK_NGRAM",
    "MAX_TURNS_LIMIT",
    "PERSONA_PROMPT",
    "TRANSCRIPT_JUDGES",
    "TRANSCRIPT_JUDGE_PROMPT_VERSION",
    "TRANSCRIPT_RUBRICS",
    "CallableTarget",
    "ChatTarget",
    "CheckValues",
    "ConversationEvaluator",
    "ConversationRunTarget",
    "ConversationTarget",
    "Environment",
    "Estimate",
    "FidelityFlag",
    "FidelityKind",
    "FinalState",
    "GoalCheck",
    "Played",
    "Replay",
    "ReplayMode",
    "Scenario",
    "ScenarioChecks",
    "ScenarioMessage",
    "ScenarioSet",
    "SimulatedUser",
    "SimulatorFidelity",
    "StopRules",
    "TargetReply",
    "Tool",
    "ToolBox",
    "ToolFixture",
    "ToolResult",
    "ToolSpec",
    "TranscriptJudgeName",
    "TurnRegression",
    "UserReply",
    "chat_messages",
    "check_fidelity",
    "check_values",
    "did_worse",
    "estimate_calls",
    "estimate_run",
    "first_regressed_turn",
    "judge_fidelity",
    "load_scenarios",
    "records_from_file",
    "run_conversation",
    "run_conversations",
    "scenario_from_row",
    "transcript_judge",
    "transcript_lines",
]
