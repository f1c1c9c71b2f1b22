"""The keys a workflow definition may hold in its inputs, outputs, steps and evaluation block."""

from __future__ import annotations

__all__ = [
    "BUDGET_KEYS",
    "EVALUATION_KEYS",
    "INPUT_KEYS",
    "INPUT_TYPES",
    "OUTPUT_KEYS",
    "OVERRIDE_KEYS",
    "RUBRIC_KEYS",
    "STEP_KEYS",
]

INPUT_TYPES = {
    "string",
    "str",
    "number",
    "integer",
    "int",
    "float",
    "boolean",
    "bool",
    "object",
    "dict",
    "array",
    "list",
    "file",
    "any",
}
RUBRIC_KEYS = ("rubric_id", "criteria", "weights", "pass_threshold", "description")
#: Profile overrides (see ``Profile.with_overrides``).
OVERRIDE_KEYS = ("weights", "floors", "pass_threshold", "extra_gates", "slo")
EVALUATION_KEYS = (
    "profile",
    "scoring_profile",
    "rubric",
    "overrides",
    "allow_missing_criteria",
    "budgets",
    "gates",
    "version",
    *RUBRIC_KEYS,
    *OVERRIDE_KEYS,
)
#: Keys of a declared input, output or step. Besides the ones read here, the keys agentic
#: workflow engines write (a step's own ``inputs``/``outputs`` mappings, ``when``, ``tools``,
#: ``loop_until``...) are accepted and left to the engine; any other key is a misspelling.
INPUT_KEYS = ("type", "required", "enum", "default", "description")
OUTPUT_KEYS = ("from", "optional", "description")
STEP_KEYS = (
    "name",
    "agent",
    "agent_role",
    "depends_on",
    "critical",
    "description",
    "inputs",
    "outputs",
    "when",
    "tools",
    "prompt_file",
    "model",
    "model_override",
    "loop_until",
    "loop_max",
)
#: Budgets are checked against these per-run metrics.
BUDGET_KEYS = ("latency_s", "retries", "retry_amplification", "tokens", "cost_usd")
