"""Step scores and the per-agent roll-up of a workflow run."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from aieval.workflows._model import WorkflowRun
from aieval.workflows._model_calls import token_total, unpriced

__all__ = ["agent_rollup", "step_details", "step_score_warnings", "step_scores"]

#: Steps without an agent role are rolled up under this name.
UNASSIGNED = "unassigned"


def step_scores(run: WorkflowRun) -> dict[str, dict[str, float]]:
    """``{step: {score name: value}}`` from each step's ``metadata.scores`` (numbers only)."""
    out: dict[str, dict[str, float]] = {}
    for step in run.steps:
        scores = _numbers(step.metadata.get("scores"))
        if scores:
            out[step.name] = scores
    return out


def step_score_warnings(run: WorkflowRun) -> list[str]:
    """One warning per step score that is not a finite number, naming the step and the key.

    Such values are left out of :func:`step_scores` and the roll-up, never silently.

    Example:
        >>> run = WorkflowRun.from_dict({"workflow_id": "r", "steps": [
        ...     {"step_name": "a", "metadata": {"scores": {"quality": "high", "speed": 0.5}}}]})
        >>> step_score_warnings(run)
        ["step 'a': metadata.scores.quality is 'high' (str), not a finite number; left out of step_scores and the agent roll-up"]
    """  # noqa: E501
    warnings: list[str] = []
    for step in run.steps:
        scores = step.metadata.get("scores")
        if scores is None:
            continue
        if not isinstance(scores, Mapping):
            warnings.append(
                f"step {step.name!r}: metadata.scores is a {type(scores).__name__}, not a "
                "mapping of score name to number; ignored"
            )
            continue
        for name, item in scores.items():
            if _number(item) is None:
                shown = repr(item)
                shown = shown if len(shown) <= 60 else shown[:57] + "..."
                warnings.append(
                    f"step {step.name!r}: metadata.scores.{name} is {shown} "
                    f"({type(item).__name__}), not a finite number; left out of step_scores and "
                    "the agent roll-up"
                )
    return warnings


def agent_rollup(run: WorkflowRun) -> dict[str, dict[str, Any]]:
    """Per agent role: steps, failures, retries, summed duration, tokens, cost, mean scores.

    Example:
        >>> run = WorkflowRun.from_dict({"workflow_id": "r", "steps": [
        ...     {"step_name": "a", "agent_role": "coder", "retry_count": 1,
        ...      "metadata": {"duration_s": 2.0, "scores": {"quality": 0.5}}},
        ...     {"step_name": "b", "agent_role": "coder", "status": "failed",
        ...      "metadata": {"duration_s": 1.0, "scores": {"quality": 1.0}}}]})
        >>> r = agent_rollup(run)["coder"]
        >>> r["steps"], r["failures"], r["retries"], r["duration_s"], r["scores"]
        (2, 1, 1, 3.0, {'quality': 0.75})
    """
    groups: dict[str, dict[str, Any]] = {}
    sums: dict[str, dict[str, list[float]]] = {}
    unknown: dict[str, set[str]] = {}
    for step in run.steps:
        role = step.agent_role or UNASSIGNED
        entry = groups.setdefault(role, _empty())
        entry["steps"] += 1
        entry["step_names"].append(step.name)
        entry["failures"] += step.status == "failed"
        entry["skipped"] += step.status == "skipped"
        entry["retries"] += step.retry_count
        entry["duration_s"] = _add(entry["duration_s"], step.duration_s)
        entry["tokens"] = _add(entry["tokens"], step.tokens)
        entry["cost_usd"] = _add(entry["cost_usd"], step.cost)
        # a model call that reported no tokens (or cost) leaves the agent's sum unknown
        tokens = token_total(step.metadata)
        if tokens is not None and not tokens.complete:
            unknown.setdefault(role, set()).add("tokens")
        if unpriced(step.metadata):
            unknown.setdefault(role, set()).add("cost_usd")
        if step.model_used and step.model_used not in entry["models"]:
            entry["models"].append(step.model_used)
        for name, value in _numbers(step.metadata.get("scores")).items():
            sums.setdefault(role, {}).setdefault(name, []).append(value)
    for role, entry in groups.items():
        entry["scores"] = {n: sum(v) / len(v) for n, v in sums.get(role, {}).items()}
        entry.update(dict.fromkeys(unknown.get(role, ())))
    return groups


def step_details(run: WorkflowRun) -> list[dict[str, Any]]:
    """Per step, in order: name, agent, status, duration, model calls, tokens (input, output,
    total; ``None`` where unknown) and tool calls (``name``, ``executed``, ``status``).

    Example:
        >>> run = WorkflowRun.from_dict({"workflow_id": "r", "steps": [
        ...     {"step_name": "a", "agent_role": "billing", "metadata": {
        ...         "input_tokens": 50, "output_tokens": 12,
        ...         "tool_calls": [{"name": "get_order", "executed": True}]}}]})
        >>> d = step_details(run)[0]
        >>> d["tokens"], [c["name"] for c in d["tool_calls"]]
        (62, ['get_order'])
    """
    details: list[dict[str, Any]] = []
    for step in run.steps:
        calls = step.metadata.get("tool_calls")
        models = step.metadata.get("model_calls")
        details.append(
            {
                "name": step.name,
                "agent": step.agent_role,
                "status": step.status,
                "duration_s": step.duration_s,
                "model_calls": len(models) if isinstance(models, list) else 0,
                "input_tokens": _count(step.metadata.get("input_tokens")),
                "output_tokens": _count(step.metadata.get("output_tokens")),
                "tokens": step.tokens,
                "tool_calls": [_tool_call(c) for c in (calls if isinstance(calls, list) else ())],
            }
        )
    return details


def _tool_call(call: Any) -> dict[str, Any]:
    """A tool call as the step details list it (the name, whether it ran, its status)."""
    if not isinstance(call, Mapping):
        return {"name": str(call), "executed": None, "status": None}
    function = call.get("function")
    name = call.get("name") or (function.get("name") if isinstance(function, Mapping) else None)
    executed = call.get("executed")
    status = call.get("status")
    return {
        "name": str(name) if name is not None else "?",
        "executed": executed if isinstance(executed, bool) else None,
        "status": str(status) if status is not None else None,
    }


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _empty() -> dict[str, Any]:
    return {
        "steps": 0,
        "step_names": [],
        "failures": 0,
        "skipped": 0,
        "retries": 0,
        "duration_s": None,
        "tokens": None,
        "cost_usd": None,
        "models": [],
        "scores": {},
    }


def _add(total: Any, value: float | int | None) -> Any:
    if value is None:
        return total
    return value if total is None else total + value


def _numbers(value: Any) -> dict[str, float]:
    """The finite numbers of a ``scores`` mapping (see :func:`step_score_warnings` for the rest)."""
    if not isinstance(value, Mapping):
        return {}
    out: dict[str, float] = {}
    for name, item in value.items():
        number = _number(item)
        if number is not None:
            out[str(name)] = number
    return out


def _number(item: Any) -> float | None:
    """A score as a float: a finite number, or a mapping's ``value`` (else ``score``)."""
    if isinstance(item, Mapping):
        item = item.get("value", item.get("score"))
    if isinstance(item, int | float) and not isinstance(item, bool) and math.isfinite(item):
        return float(item)
    return None
