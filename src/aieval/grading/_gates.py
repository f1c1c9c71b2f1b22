"""The gate registry (layer 0) and the built-in gate checks.

A gate check is a pure function over explicit keyword inputs (dicts, lists, strings, numbers)
returning a :class:`GateResult` with a reason and evidence. Gates never pass silently: a gate
without a registered check, without inputs, or whose check raised, is a failed gate whose reason
says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

from aieval._floors import at_least
from aieval.core import GROUPS, load_plugin, plugin_names
from aieval.errors import AievalError, ConfigError
from aieval.grading._gate_result import GateResult

__all__ = [
    "REQUIRED_GATES",
    "Gate",
    "GateCheck",
    "evaluate_gates",
    "gate_known",
    "gate_names",
    "get_gate",
    "register_gate",
]

GateCheck = Callable[..., GateResult | bool]

#: The five gates every workflow evaluation must pass (spec section 3).
REQUIRED_GATES: tuple[str, ...] = (
    "required_outputs_present",
    "overall_status_success",
    "no_critical_step_failures",
    "schema_contract_valid",
    "dataset_workflow_compatible",
)


@dataclass(frozen=True, slots=True)
class Gate:
    """A registered gate.

    Attributes:
        name: the gate's name as used in profiles and results.
        check: the check function, or ``None`` for a gate declared by name whose check is
            supplied later (or whose verdict is computed elsewhere and passed in).
        description: one line for docs and listings.
    """

    name: str
    check: GateCheck | None
    description: str = ""


_REGISTRY: dict[str, Gate] = {}
#: The entry-point group of gate checks that live outside grading (the scorers' own gates).
GATES_GROUP = GROUPS["gates"]


@overload
def register_gate(
    name: str, check: None = None, *, description: str = ..., replace: bool = ...
) -> Callable[[GateCheck], GateCheck]: ...


@overload
def register_gate(
    name: str, check: GateCheck, *, description: str = ..., replace: bool = ...
) -> GateCheck: ...


def register_gate(
    name: str,
    check: GateCheck | None = None,
    *,
    description: str = "",
    replace: bool = False,
) -> GateCheck | Callable[[GateCheck], GateCheck]:
    """Register a gate check, directly or as a decorator.

    A gate declared by name only (the profile gates whose checks live in scorer modules) can be
    given its check later without ``replace``; replacing an existing check needs ``replace=True``.

    Example:
        >>> @register_gate("nonempty", description="the answer is not empty", replace=True)
        ... def nonempty(*, text: str) -> GateResult:
        ...     ok = bool(text.strip())
        ...     return GateResult("nonempty", ok, "" if ok else "empty answer")
        >>> evaluate_gates(["nonempty"], {"nonempty": {"text": "hi"}})[0].passed
        True
    """

    def add(func: GateCheck) -> GateCheck:
        _add(name, func, description, replace)
        return func

    return add if check is None else add(check)


def _add(name: str, check: GateCheck | None, description: str, replace_existing: bool) -> None:
    if not name or not isinstance(name, str):
        raise ConfigError("register_gate needs a non-empty string name")
    if check is not None and not callable(check):
        raise ConfigError(f"gate {name!r}: check must be callable, got {type(check).__name__}")
    existing = _REGISTRY.get(name)
    if existing is not None and existing.check is not None and not replace_existing:
        raise ConfigError(f"gate {name!r} already has a check; pass replace=True to override it")
    desc = description or (existing.description if existing else "")
    if not desc and check is not None:
        desc = (check.__doc__ or "").strip().split("\n")[0]
    _REGISTRY[name] = Gate(name, check, desc)


def _declare(name: str, description: str) -> None:
    """Declare a gate by name whose check comes from its ``aieval.gates`` plug-in."""
    _REGISTRY.setdefault(name, Gate(name, None, description))


def _registered(name: str) -> Gate | None:
    """The gate; a gate without a check yet takes it from its ``aieval.gates`` plug-in."""
    gate = _REGISTRY.get(name)
    if gate is None or gate.check is None:
        check = load_plugin(GATES_GROUP, name)
        if check is not None:
            gate = _REGISTRY.get(name)
            if gate is None or gate.check is None:  # importing it may have registered it
                _add(name, check, "", replace_existing=False)
            gate = _REGISTRY.get(name)
    return gate


def get_gate(name: str) -> Gate:
    """The registered gate, or :class:`ConfigError` listing the known names."""
    gate = _registered(name)
    if gate is None:
        raise ConfigError(f"unknown gate {name!r}; known gates: {', '.join(gate_names())}")
    return gate


def gate_known(name: str) -> bool:
    """Whether ``name`` is a registered or declared gate, or an ``aieval.gates`` plug-in.

    The registry answers first: listing the installed plug-ins reads every package's metadata
    (milliseconds), which a profile validated per graded sample must not pay for known gates.
    """
    return name in _REGISTRY or name in plugin_names(GATES_GROUP)


def gate_names() -> list[str]:
    """Sorted names of every registered or declared gate, and of ``aieval.gates`` plug-ins."""
    return sorted(set(_REGISTRY) | set(plugin_names(GATES_GROUP)))


def evaluate_gates(
    names: Iterable[str],
    inputs: Mapping[str, Mapping[str, Any] | GateResult | bool],
) -> list[GateResult]:
    """Evaluate gates by name, in order.

    Args:
        names: the gates to evaluate (a profile's gates, say).
        inputs: per gate, either the keyword arguments of its check, or a verdict computed
            elsewhere (a :class:`GateResult` or a bool).

    Returns:
        One result per name. A gate with no inputs, no registered check, or whose check raised
        an unexpected exception is a *failed* result whose reason says why.
    """
    return [_evaluate_one(name, inputs.get(name)) for name in names]


def _evaluate_one(name: str, given: Mapping[str, Any] | GateResult | bool | None) -> GateResult:
    if isinstance(given, GateResult):
        return given if given.name == name else replace(given, name=name)
    if isinstance(given, bool):
        return GateResult(name, given, "" if given else "reported as failed")
    if given is None:
        return GateResult(name, False, "gate was not evaluated: no inputs or verdict supplied")
    gate = _registered(name)
    if gate is None or gate.check is None:
        why = "unknown gate" if gate is None else "no check is registered for this gate"
        return GateResult(name, False, f"gate was not evaluated: {why}")
    try:
        outcome = gate.check(**given)
    except AievalError:
        raise
    except Exception as exc:  # a crashing check must fail its gate, not the whole evaluation
        return GateResult(
            name, False, f"check raised {type(exc).__name__}: {exc}", {"error": repr(exc)}
        )
    if isinstance(outcome, GateResult):
        return outcome if outcome.name == name else replace(outcome, name=name)
    if isinstance(outcome, bool):
        return GateResult(name, outcome, "" if outcome else "check returned False")
    return GateResult(
        name, False, f"check returned {type(outcome).__name__}, expected GateResult or bool"
    )


# -- built-in checks ------------------------------------------------------------------------------

_SUCCESS_STATUSES = ("success", "succeeded")
_FAILED_STEP_STATUSES = ("failed", "error", "timeout", "timed_out")


def _norm_status(value: Any) -> str:
    raw = getattr(value, "value", value)  # accept str-valued enums
    return str(raw).strip().lower()


def required_outputs_present(
    *,
    outputs: Mapping[str, Any] | None,
    required: Iterable[str],
    unresolved: Iterable[str] = (),
) -> GateResult:
    """Every required output exists, is not ``None`` and was resolved.

    Args:
        outputs: the run's final outputs by name (``None`` when the run produced none).
        required: names of the non-optional outputs.
        unresolved: outputs the runner could not resolve (they never pass, even if present).
    """
    name = "required_outputs_present"
    values = outputs if isinstance(outputs, Mapping) else {}
    unresolved_set = set(unresolved)
    missing = [o for o in required if o not in values]
    empty = [o for o in required if o in values and values[o] is None]
    not_resolved = [o for o in required if o in unresolved_set and o not in missing + empty]
    if not (missing or empty or not_resolved):
        return GateResult(name, True, "all required outputs present")
    parts = []
    if missing:
        parts.append(f"missing: {', '.join(missing)}")
    if empty:
        parts.append(f"present but None: {', '.join(empty)}")
    if not_resolved:
        parts.append(f"unresolved: {', '.join(not_resolved)}")
    evidence = {"missing": missing, "none": empty, "unresolved": not_resolved}
    return GateResult(name, False, "required outputs " + "; ".join(parts), evidence)


def overall_status_success(
    *, status: Any, success_statuses: Sequence[str] = _SUCCESS_STATUSES
) -> GateResult:
    """The run's overall status is a success status (case-insensitive)."""
    name = "overall_status_success"
    got = _norm_status(status) if status is not None else "none"
    allowed = [s.lower() for s in success_statuses]
    if got in allowed:
        return GateResult(name, True, f"overall status {got!r}", {"status": got})
    return GateResult(
        name,
        False,
        f"overall status is {got!r}, expected one of {', '.join(allowed)}",
        {"status": got, "expected": allowed},
    )


def no_critical_step_failures(
    *,
    steps: Sequence[Mapping[str, Any]],
    failed_statuses: Sequence[str] = _FAILED_STEP_STATUSES,
) -> GateResult:
    """No critical step failed.

    Args:
        steps: dicts with ``name``, ``status`` and optionally ``critical`` (default ``True``:
            a step is critical unless marked otherwise).
        failed_statuses: statuses that count as a failure.
    """
    name = "no_critical_step_failures"
    bad = {s.lower() for s in failed_statuses}
    failed = [
        {"name": str(step.get("name", f"step[{i}]")), "status": _norm_status(step.get("status"))}
        for i, step in enumerate(steps)
        if step.get("critical", True) and _norm_status(step.get("status")) in bad
    ]
    if not failed:
        return GateResult(name, True, f"no critical step failed ({len(steps)} steps)")
    listed = ", ".join(f"{f['name']} ({f['status']})" for f in failed)
    return GateResult(name, False, f"critical steps failed: {listed}", {"failed_steps": failed})


def schema_contract_valid(*, instance: Any, schema: Mapping[str, Any]) -> GateResult:
    """The output validates against its JSON Schema; the reason names the failing JSON path.

    Raises:
        ConfigError: the schema itself is not a valid JSON Schema.
    """
    import jsonschema
    from jsonschema.exceptions import SchemaError, best_match

    name = "schema_contract_valid"
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(dict(schema))
    except SchemaError as exc:
        raise ConfigError(f"gate {name!r}: the contract schema is invalid: {exc.message}") from exc
    errors = list(cls(schema).iter_errors(instance))
    if not errors:
        return GateResult(name, True, "output matches its schema")
    first = best_match(errors)
    details = [{"path": e.json_path, "message": e.message} for e in errors[:20]]
    return GateResult(
        name,
        False,
        f"schema violation at {first.json_path}: {first.message}",
        {"errors": details, "error_count": len(errors)},
    )


def dataset_workflow_compatible(
    *, required_inputs: Iterable[str], available: Mapping[str, Any] | Iterable[str]
) -> GateResult:
    """The dataset row supplies every input the workflow requires (``None`` counts as missing).

    Args:
        required_inputs: the workflow's required input names.
        available: the dataset row (a mapping) or the names of its fields.
    """
    name = "dataset_workflow_compatible"
    if isinstance(available, Mapping):
        present = {k for k, v in available.items() if v is not None}
    else:
        present = set(available)
    required = list(required_inputs)
    missing = [i for i in required if i not in present]
    if not missing:
        return GateResult(name, True, "dataset supplies every required input")
    return GateResult(
        name,
        False,
        f"dataset is missing workflow inputs: {', '.join(missing)}",
        {"missing_inputs": missing, "available": sorted(present)},
    )


def tests_fail_to_pass_all_green(*, passed: int, total: int, threshold: float = 1.0) -> GateResult:
    """SWE gate: the fail-to-pass ratio reaches ``threshold`` (default 1.0: all green).

    No fail-to-pass tests at all fails: nothing shows the issue was fixed.
    """
    return _tests_ratio(
        "tests_fail_to_pass_all_green",
        "fail-to-pass",
        passed,
        total,
        threshold,
        none=(False, "no fail-to-pass tests: the fix is unverified"),
    )


def tests_pass_to_pass_threshold_met(
    *, passed: int, total: int, threshold: float = 0.95
) -> GateResult:
    """SWE gate: the pass-to-pass ratio reaches ``threshold`` (default 0.95).

    With no pass-to-pass tests there is nothing to regress, so the gate passes (and says so).
    """
    return _tests_ratio(
        "tests_pass_to_pass_threshold_met",
        "pass-to-pass",
        passed,
        total,
        threshold,
        none=(True, "no pass-to-pass tests to regress"),
    )


def _tests_ratio(
    name: str, kind: str, passed: int, total: int, threshold: float, *, none: tuple[bool, str]
) -> GateResult:
    """A SWE test-ratio gate: ``passed / total`` reaches ``threshold``; ``none`` is the
    verdict and reason when there are no such tests."""
    evidence = {"passed": passed, "total": total, "threshold": threshold}
    if total <= 0:
        return GateResult(name, none[0], none[1], evidence)
    ratio = passed / total
    evidence["ratio"] = ratio
    if at_least(ratio, threshold):
        return GateResult(name, True, f"{kind} {passed}/{total}", evidence)
    return GateResult(
        name, False, f"{kind} {passed}/{total} = {ratio:.3f} < {threshold:g}", evidence
    )


def no_sandbox_violations(*, violations: Sequence[Any]) -> GateResult:
    """No sandbox or security policy violation was recorded."""
    name = "no_sandbox_violations"
    if not violations:
        return GateResult(name, True, "no sandbox or security policy violations")
    shown = "; ".join(str(v) for v in list(violations)[:5])
    return GateResult(
        name,
        False,
        f"{len(violations)} sandbox/security violation(s): {shown}",
        {"violations": [str(v) for v in violations]},
    )


def no_high_severity_hallucinations(
    *, findings: Sequence[Mapping[str, Any]], blocking: Sequence[str] = ("high", "critical")
) -> GateResult:
    """No hallucination finding of a blocking severity (dicts with ``severity``, ``claim``)."""
    name = "no_high_severity_hallucinations"
    levels = {b.lower() for b in blocking}
    hits = [f for f in findings if str(f.get("severity", "")).lower() in levels]
    if not hits:
        return GateResult(name, True, f"no {'/'.join(sorted(levels))} hallucinations")
    claims = "; ".join(str(f.get("claim", "?")) for f in hits[:5])
    return GateResult(
        name,
        False,
        f"{len(hits)} high-severity hallucination(s): {claims}",
        {"findings": [dict(f) for f in hits]},
    )


def answer_grounded_in_context(*, unsupported_claims: Sequence[str]) -> GateResult:
    """Every claim of the answer is supported by the retrieved context."""
    name = "answer_grounded_in_context"
    if not unsupported_claims:
        return GateResult(name, True, "every claim is supported by the retrieved context")
    return GateResult(
        name,
        False,
        f"{len(unsupported_claims)} claim(s) not supported by the retrieved context",
        {"unsupported_claims": list(unsupported_claims)},
    )


for _check in (
    required_outputs_present,
    overall_status_success,
    no_critical_step_failures,
    schema_contract_valid,
    dataset_workflow_compatible,
    tests_fail_to_pass_all_green,
    tests_pass_to_pass_threshold_met,
    no_sandbox_violations,
    no_high_severity_hallucinations,
    answer_grounded_in_context,
):
    register_gate(_check.__name__, _check)

# Checks for these live with the scorers (citations, tool calls, handoffs, patches): each is an
# ``aieval.gates`` plug-in, loaded the first time the gate is needed.
for _name, _desc in (
    ("citations_present_for_claims", "every factual claim carries a citation or link"),
    ("tool_call_schema_valid", "every tool call's arguments match the tool's JSON Schema"),
    ("no_forbidden_tool_invoked", "no tool outside the allowed set was called"),
    ("handoff_graph_respected", "agent handoffs follow the declared handoff graph"),
    ("final_state_matches", "the state the episode left matches the expected final state"),
    ("patch_applies", "the generated patch applies cleanly to the repository"),
):
    _declare(_name, _desc)
