"""The support app's workflow definition as its traces are graded (profile D)."""

from __future__ import annotations

from typing import Any

TOOLS = {
    name: {
        "type": "object",
        "required": ["order_id"],
        "properties": {"order_id": {"type": "string", "pattern": "^A[0-9]+$"}},
        "additionalProperties": False,
    }
    for name in ("get_order", "issue_refund")
}

DEFINITION: dict[str, Any] = {
    "name": "support_traces",
    "version": "1",
    "steps": [
        {"name": "triage", "agent": "triage"},
        {"name": "billing", "agent": "billing", "depends_on": ["triage"]},
        {"name": "writer", "agent": "writer", "depends_on": ["billing"]},
    ],
    "outputs": {"output": {"from": "${steps.writer.outputs.output}"}},
    "evaluation": {
        "scoring_profile": "D",
        "gates": {
            "tool_call_schema_valid": {"tools": TOOLS},
            "no_forbidden_tool_invoked": {"forbidden": ["delete_account"]},
            "handoff_graph_respected": {
                "allowed": {"triage": ["billing", "writer"], "billing": ["writer"], "writer": []},
                "start": "triage",
            },
        },
    },
}

#: Profile D's criteria, all met: a trace's grade then turns on its gates.
SCORES = {
    "tool_selection_accuracy": 1.0,
    "argument_correctness": 1.0,
    "handoff_accuracy": 1.0,
    "task_correctness": 1.0,
}
