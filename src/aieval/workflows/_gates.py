"""Layer-0 gates computed from a workflow run, its definition and the dataset sample."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from aieval.grading import (
    GateResult,
    dataset_workflow_compatible,
    evaluate_gates,
    no_critical_step_failures,
    overall_status_success,
    required_outputs_present,
    schema_contract_valid,
)
from aieval.workflows._definition import WorkflowDefinition
from aieval.workflows._model import WorkflowRun
from aieval.workflows._reading import UNRESOLVED_KEYS, output_names
from aieval.workflows._tracegate import trace_complete

__all__ = [
    "agent_delegations",
    "agent_path",
    "calls_by_agent",
    "check_compatible",
    "run_gates",
    "tool_calls",
    "trajectory_calls",
    "unresolved_outputs",
]

_STEP_REF = re.compile(r"steps\.([A-Za-z0-9_\-]+)")


def run_gates(
    run: WorkflowRun,
    definition: WorkflowDefinition | None,
    sample: Mapping[str, Any] | None,
    gate_names: list[str],
    given: Mapping[str, Any] | None = None,
) -> list[GateResult]:
    """Evaluate ``gate_names`` for one run: the five required gates are computed here; the
    profile's own gates take inputs from ``given``, the definition's ``evaluation.gates`` (with
    tool calls and the agent handoff path filled in from the run) or verdicts the run recorded.
    """
    computed = {
        "required_outputs_present": _outputs_gate(run, definition),
        "overall_status_success": overall_status_success(status=run.status),
        "no_critical_step_failures": _steps_gate(run, definition),
        "schema_contract_valid": _schema_gate(run, definition),
        "dataset_workflow_compatible": check_compatible(definition, _available(run, sample)),
    }
    inputs: dict[str, Any] = {}
    for name in gate_names:
        if name in computed:
            inputs[name] = computed[name]
        elif given is not None and name in given:
            inputs[name] = given[name]
        elif name == FINAL_STATE_GATE and (state := _state_inputs(run, definition, sample)):
            inputs[name] = state
        elif definition is not None and name in definition.evaluation.gate_inputs:
            inputs[name] = _with_run_facts(definition.evaluation.gate_inputs[name], run)
        elif name in _recorded_gates(run):
            inputs[name] = _recorded_gates(run)[name]
    results = evaluate_gates(gate_names, inputs)
    traced = trace_complete(run)
    if traced is not None and "trace_complete" not in gate_names:
        results.append(traced)
    return results


#: the gate on the state the run left (``aieval.scorers.state.final_state_matches``)
FINAL_STATE_GATE = "final_state_matches"


def _state_inputs(
    run: WorkflowRun, definition: WorkflowDefinition | None, sample: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """``final_state_matches``'s inputs: the run's ``final_state`` output, the row's
    ``expected_state`` and ``state_match``, and the definition's options (``ignore``,
    ``tolerance``, ``unordered``); ``None`` when neither the row nor the definition gives an
    expected state (the gate then takes a recorded verdict, or fails as not evaluated)."""
    options = (
        dict(definition.evaluation.gate_inputs.get(FINAL_STATE_GATE, {})) if definition else {}
    )
    row = sample or {}
    if row.get("expected_state") is None and options.get("expected") is None:
        return None
    inputs: dict[str, Any] = {**options, "actual": (run.outputs or {}).get("final_state")}
    if row.get("expected_state") is not None:
        inputs["expected"] = row["expected_state"]
    if row.get("state_match") is not None:
        inputs["state_match"] = row["state_match"]
    return inputs


def unresolved_outputs(run: WorkflowRun, definition: WorkflowDefinition | None) -> list[str]:
    """Outputs that did not resolve: the run says so (``metadata.unresolved_outputs`` or
    ``metadata.unresolved_required_outputs``, as agentic runners record it: a list of names, one
    name, or a mapping of name to reason), or their source step did not succeed (a value left
    behind by a failed or skipped step is not a result).

    Raises:
        WorkflowError: one of those fields holds something else (names the field).
    """
    found: list[str] = []
    for key in UNRESOLVED_KEYS:
        found.extend(o for o in _names(run, key) if o not in found)
    if definition is None:
        return found
    for spec in definition.outputs.values():
        match = _STEP_REF.search(spec.source or "")
        step = run.step(match.group(1)) if match else None
        if step is not None and step.status != "success" and spec.name not in found:
            found.append(spec.name)
    return found


def check_compatible(
    definition: WorkflowDefinition | None, available: Mapping[str, Any] | None
) -> GateResult:
    """``dataset_workflow_compatible``: every required input is supplied, enum values allowed."""
    name = "dataset_workflow_compatible"
    if definition is None:
        return GateResult(name, True, "no workflow definition: no declared inputs to supply")
    result = dataset_workflow_compatible(
        required_inputs=definition.required_inputs, available=dict(available or {})
    )
    if not result.passed:
        return result
    bad = [
        f"{spec.name}={available[spec.name]!r} (allowed: {', '.join(map(repr, spec.enum))})"
        for spec in definition.inputs.values()
        if available
        and spec.enum is not None
        and available.get(spec.name) is not None
        and available[spec.name] not in spec.enum
    ]
    if bad:
        return GateResult(
            name, False, f"inputs outside their enum: {'; '.join(bad)}", {"enum_violations": bad}
        )
    return result


def _outputs_gate(run: WorkflowRun, definition: WorkflowDefinition | None) -> GateResult:
    """``required_outputs_present``. An output the run records as unresolved fails the gate
    when the definition requires it, when the runner calls it required
    (``unresolved_required_outputs``), when the definition does not declare it, or (without a
    definition) always; only a declared optional output may stay unresolved, and is reported."""
    name = "required_outputs_present"
    unresolved = unresolved_outputs(run, definition)
    if definition is None and not run.outputs:
        return GateResult(name, False, "the run produced no outputs")
    said_required = _names(run, "unresolved_required_outputs")
    if definition is None:
        required, undeclared, optional = unresolved, [], []
    else:
        required = list(definition.required_outputs)
        undeclared = [o for o in unresolved if o not in definition.outputs]
        optional = [o for o in unresolved if o not in required and o not in said_required]
        optional = [o for o in optional if o not in undeclared]
        required = list(dict.fromkeys([*required, *said_required, *undeclared]))
    gate = required_outputs_present(outputs=run.outputs, required=required, unresolved=unresolved)
    reason, evidence = gate.reason, dict(gate.evidence)
    if undeclared:
        evidence["undeclared"] = undeclared
        reason += (
            f"; the run records {', '.join(undeclared)} as unresolved, an output the workflow "
            "does not declare"
        )
    if optional:
        evidence["unresolved_optional"] = optional
        reason += f"; unresolved optional outputs: {', '.join(optional)}"
    if not gate.passed and _trace_without_content(run):
        evidence["message_content_recorded"] = False
        reason += NO_CONTENT_HINT
    return GateResult(name, gate.passed, reason, evidence)


#: Why a trace may hold no output, and how to record one (the instrumentation's own switch).
NO_CONTENT_HINT = (
    "; the trace records no message content on any span, so no output can be read from it: "
    "the instrumentation did not record content (opentelemetry-instrumentation-openai-v2 "
    "records none by default). Record it: with an instrumentation built on "
    "opentelemetry-util-genai, set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY "
    "(with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental); "
    "opentelemetry-instrumentation-openai-v2 2.3b0 and earlier write content only as log events "
    "(with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true), never on spans, so set the "
    "answer on the agent or root span yourself (gen_ai.output.messages)"
)


def _trace_without_content(run: WorkflowRun) -> bool:
    """A run read from a trace in which no span (but tools') records message content, though
    model calls were made: what the trace lacks may never have been recorded."""
    trace = run.metadata.get("trace")
    if not isinstance(trace, Mapping) or trace.get("message_content") is not False:
        return False
    return any(step.metadata.get("model_calls") for step in run.steps)


def _names(run: WorkflowRun, key: str) -> list[str]:
    """The output names the run records under ``metadata[key]``."""
    return output_names(run.metadata.get(key), f"run {run.workflow_id!r}, field 'metadata.{key}'")


def _steps_gate(run: WorkflowRun, definition: WorkflowDefinition | None) -> GateResult:
    steps = [
        {
            "name": s.name,
            "status": s.status,
            "critical": definition.is_critical(s.name) if definition is not None else True,
        }
        for s in run.steps
    ]
    return no_critical_step_failures(steps=steps)


def _schema_gate(run: WorkflowRun, definition: WorkflowDefinition | None) -> GateResult:
    if definition is None or definition.output_schema is None:
        return GateResult("schema_contract_valid", True, "no output schema declared")
    return schema_contract_valid(instance=run.outputs or {}, schema=definition.output_schema)


def _available(run: WorkflowRun, sample: Mapping[str, Any] | None) -> dict[str, Any]:
    merged: dict[str, Any] = dict(run.inputs or {})
    if sample is not None:
        nested = sample.get("input")
        if isinstance(nested, Mapping):
            merged.update(nested)
        merged.update({k: v for k, v in sample.items() if k != "input"})
    return merged


def _with_run_facts(inputs: Mapping[str, Any], run: WorkflowRun) -> dict[str, Any]:
    """Fill ``calls`` (every step's tool calls) and ``path`` (agents in order) from the run."""
    filled = dict(inputs)
    filled.setdefault("calls", tool_calls(run))
    if "allowed" in filled:
        filled.setdefault("path", agent_path(run))
        delegations = agent_delegations(run)
        if delegations:  # only then: a gate registered without the argument keeps working
            filled.setdefault("delegations", delegations)
    return {k: v for k, v in filled.items() if k != "calls" or _wants_calls(inputs)}


def _wants_calls(inputs: Mapping[str, Any]) -> bool:
    return "allowed" not in inputs  # handoff gates take a path, not calls


def tool_calls(run: WorkflowRun) -> list[Any]:
    """Every tool call recorded on the run's steps (``metadata.tool_calls`` or outputs'),
    delegated agents' included: what the safety gates (forbidden tools, argument schemas)
    check, so nesting a call inside an agent used as a tool never hides it."""
    calls: list[Any] = []
    for step in run.steps:
        calls.extend(_step_calls(step))
    return calls


def trajectory_calls(run: WorkflowRun) -> list[Any]:
    """The run's trajectory: the tool calls of the agents that held control (the handoff
    path), of the run's orchestrating agent and of steps that are no agent, in step order.

    An agent another one used as a tool (``delegated_by``) is one call of its caller (the
    caller's own tool call that ran it, as the trace records it); the calls it made inside
    are its own (:func:`calls_by_agent`), not the run's.
    """
    calls: list[Any] = []
    for step in run.steps:
        if not _delegated(step.metadata):
            calls.extend(_step_calls(step))
    return calls


def calls_by_agent(run: WorkflowRun) -> dict[str, list[Any]]:
    """Each agent's own tool calls, by agent (a step without an agent by its step name),
    delegated agents apart from their callers."""
    found: dict[str, list[Any]] = {}
    for step in run.steps:
        calls = _step_calls(step)
        if calls:
            found.setdefault(step.agent_role or step.name, []).extend(calls)
    return found


def _step_calls(step: Any) -> list[Any]:
    calls: list[Any] = []
    for holder in (step.metadata, step.outputs):
        found = holder.get("tool_calls") if isinstance(holder, Mapping) else None
        if isinstance(found, list):
            calls.extend(found)
    return calls


def _delegated(metadata: Mapping[str, Any] | None) -> bool:
    return isinstance(metadata, Mapping) and bool(metadata.get("delegated_by"))


def agent_path(run: WorkflowRun) -> list[str]:
    """The agents that held control, in order, repeats collapsed.

    A step whose metadata marks it as the run's orchestrating agent (``agent_scope: "run"``) or
    as an agent another one used as a tool (``delegated_by``) held no handoff: it is left out.
    """
    path: list[str] = []
    for step in run.steps:
        if (
            step.agent_role
            and step.status != "skipped"
            and not _off_path(step.metadata)
            and (not path or path[-1] != step.agent_role)
        ):
            path.append(step.agent_role)
    return path


def agent_delegations(run: WorkflowRun) -> list[tuple[str, str]]:
    """``(caller, agent)`` for each step an agent ran as another's tool (``delegated_by``)."""
    found: list[tuple[str, str]] = []
    for step in run.steps:
        caller = step.metadata.get("delegated_by") if isinstance(step.metadata, Mapping) else None
        agent = step.agent_role
        if isinstance(caller, str) and caller and agent and (caller, agent) not in found:
            found.append((caller, agent))
    return found


def _off_path(metadata: Mapping[str, Any] | None) -> bool:
    if not isinstance(metadata, Mapping):
        return False
    return metadata.get("agent_scope") == "run" or bool(metadata.get("delegated_by"))


def _recorded_gates(run: WorkflowRun) -> dict[str, GateResult | bool]:
    raw = run.metadata.get("gates")
    if not isinstance(raw, Mapping):
        return {}
    out: dict[str, GateResult | bool] = {}
    for name, verdict in raw.items():
        if isinstance(verdict, bool):
            out[str(name)] = verdict
        elif isinstance(verdict, Mapping) and isinstance(verdict.get("passed"), bool):
            reason = str(verdict.get("reason", "recorded by the workflow"))
            out[str(name)] = GateResult(str(name), verdict["passed"], reason)
    return out
