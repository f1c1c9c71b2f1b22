"""One trace's spans as a :class:`~aieval.workflows.WorkflowRun`.

Agent spans are the steps (in start order, named by the agent); tool spans are the tool calls
of their nearest enclosing agent step, with the calls a model asked for but that never ran
added as ``executed: false``; model-call spans give the step its model, tokens, cost and
errors. Spans outside every agent go to one step named after the root. Spans of no known
GenAI shape are counted by name in ``metadata.trace.unmapped``, never dropped unseen.

Which agents held control (the handoff path) follows the nesting of agent spans, as the OpenAI
Agents SDK and the GenAI conventions record it: a handoff ends one agent span and starts the next
beside it, so the handoff path is the order of sibling agents. An agent span nested in another is
a delegation (an agent used as a tool; ``metadata.delegated_by``), except that the outermost
agent span, alone at the top and holding agent spans directly (not through a tool span), is the
run itself (an orchestrator; ``metadata.agent_scope: "run"``): the agents it holds are the path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aieval.errors import DatasetError
from aieval.traces import _attrs as A
from aieval.traces._complete import problems
from aieval.traces._spans import STATUS_ERROR, Span
from aieval.workflows import StepResult, WorkflowRun, token_total, unpriced

__all__ = ["trace_run"]

_NS = 1e9


@dataclass(slots=True)
class _Step:
    span: Span
    name: str
    agent: str | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    requested: list[dict[str, Any]] = field(default_factory=list)
    llm: list[Span] = field(default_factory=list)
    handoffs: list[str] = field(default_factory=list)
    #: "run": the orchestrating agent that holds the path; "delegated": used as a tool
    scope: str | None = None
    #: the step that delegated to this one (scope "delegated")
    delegated_by: str | None = None


def trace_run(
    trace_id: str, spans: Sequence[Span], cuts: Iterable[str] = (), *, isolate: bool = False
) -> WorkflowRun:
    """The workflow run of one trace (its id the trace id); ``cuts``: why the trace may be cut.

    ``metadata.trace`` records the span counts, what was not mapped, and ``missing``: what
    makes the trace incomplete (read by the ``trace_complete`` gate): among others two root
    spans, or one span id sent twice with different content.

    Raises:
        DatasetError: a span whose attributes or events cannot be read (names where it was
            read and the span); with ``isolate``, that span is read without them instead and
            the trace is incomplete, naming it.
    """
    unreadable = _unreadable(spans) if isolate else []
    by_id, duplicates, conflicts = _unique(spans)
    ordered = sorted(by_id.values(), key=lambda s: (s.start_ns, s.span_id))
    roots = [s for s in ordered if not s.parent_id]
    # of several roots, a failed one is the run's: a second root never hides a failure
    root = next((r for r in roots if _error(r) is not None), roots[0]) if roots else None
    missing = [*cuts, *unreadable, *conflicts, *problems(ordered, by_id)]
    roles = {s.span_id: A.role(s.attributes) for s in ordered}
    _unname_containers(ordered, by_id, roles)
    steps: dict[str, _Step] = {}
    names: Counter[str] = Counter()
    for span in ordered:
        if roles[span.span_id] == "agent":
            agent = A.agent_name(span.attributes, span.name)
            names[agent] += 1
            label = agent if names[agent] == 1 else f"{agent}#{names[agent]}"
            steps[span.span_id] = _Step(span, label, agent)
    _scope_agents(steps, by_id, roles)
    unmapped: Counter[str] = Counter()
    loose: _Step | None = None
    enclosing: dict[str, _Step | None] = {}
    for span in ordered:
        role = roles[span.span_id]
        if role in ("tool", "llm"):
            owner = _enclosing(span, by_id, steps, enclosing)
            if owner is None:
                if loose is None:
                    top = root or span
                    loose = _Step(top, top.name or "trace", None)
                owner = loose
            target = A.handoff_target(span.attributes, span.name) if role == "tool" else None
            if target is not None:
                if target:
                    owner.handoffs.append(target)
            elif role == "tool":
                owner.calls.append(_executed(span))
            else:
                owner.llm.append(span)
                owner.requested.extend(A.requested_calls(span.attributes))
        elif role == "other" or (role is None and span is not root):
            unmapped[span.name] += 1
    step_list = sorted(
        [*steps.values(), *([loose] if loose is not None else [])],
        key=lambda s: (s.span.start_ns, s.span.span_id),
    )
    results = [_step_result(s) for s in step_list]
    counts = Counter(r for r in roles.values() if r is not None)
    trace_meta = {
        "trace_id": trace_id,
        "spans": len(ordered),
        "duplicate_spans": duplicates,
        "mapped": {k: counts[k] for k in ("agent", "tool", "llm", "chain") if counts[k]},
        "unmapped": dict(unmapped),
        "complete": not missing,
        "missing": missing,
        # whether any span other than a tool's records message content: without it, an
        # output the trace lacks may be one the instrumentation was not told to record
        "message_content": any(
            roles[s.span_id] != "tool" and A.records_content(s.attributes) for s in ordered
        ),
    }
    return _run(trace_id, root, results, step_list, trace_meta)


def _run(
    trace_id: str,
    root: Span | None,
    results: list[StepResult],
    steps: list[_Step],
    trace_meta: dict[str, Any],
) -> WorkflowRun:
    failed = root is not None and _error(root) is not None
    output = A.output_text(root.attributes) if root is not None else None
    if output is None:  # the last agent that held control answers, not one it delegated to
        agents = [s for s in steps if s.agent is not None and s.scope is None]
        agents = agents or [s for s in steps if s.agent is not None]
        last = agents[-1] if agents else (steps[-1] if steps else None)
        output = _step_output(last) if last is not None else None
    inputs = A.input_value(root.attributes) if root is not None else None
    return WorkflowRun(
        workflow_id=trace_id,
        workflow_name=_workflow_name(root),
        status="failed" if failed else "success",
        outputs={"output": output} if output is not None else None,
        steps=results,
        start_time=root.start_ns / _NS if root is not None else None,
        end_time=root.end_ns / _NS if root is not None and root.end_ns else None,
        metadata={"trace": trace_meta},
        inputs={"input": inputs} if inputs is not None else None,
        error=_error(root) if failed and root is not None else None,
    )


def _unique(spans: Sequence[Span]) -> tuple[dict[str, Span], int, list[str]]:
    """Spans by id, each once: a span delivered twice (an export retried, a file and its copy)
    counts once, its ended copy kept. Two copies that differ (name, parent, times, status,
    attributes or events) are a conflict: the first is kept, and the trace is incomplete,
    naming the span id and both names, since either may be the true one."""
    by_id: dict[str, Span] = {}
    duplicates = 0
    clashes: list[str] = []
    for span in spans:
        seen = by_id.get(span.span_id)
        if seen is None:
            by_id[span.span_id] = span
            continue
        duplicates += 1
        if not _same(seen, span):
            clashes.append(f"{span.span_id} ({seen.name!r} and {span.name!r})")
        elif not seen.end_ns and span.end_ns:
            by_id[span.span_id] = span
    conflicts = []
    if clashes:
        shown = ", ".join(clashes[:5]) + (f" and {len(clashes) - 5} more" if clashes[5:] else "")
        conflicts.append(
            f"{len(clashes)} span id(s) sent more than once with different content (which copy "
            f"is true is unknown): {shown}"
        )
    return by_id, duplicates, conflicts


def _same(one: Span, other: Span) -> bool:
    """Two copies of one span: the same span, or one still open and the other its end."""
    if (one.trace_id, one.parent_id, one.name, one.start_ns) != (
        other.trace_id,
        other.parent_id,
        other.name,
        other.start_ns,
    ):
        return False
    if not one.end_ns or not other.end_ns:  # an open copy holds what was known then
        return True
    return (one.end_ns, one.status, one.status_message) == (
        other.end_ns,
        other.status,
        other.status_message,
    ) and _details(one) == _details(other)


def _details(span: Span) -> tuple[dict[str, Any], list[str]]:
    try:
        return span.attributes, span.exceptions
    except DatasetError as exc:
        return {"": str(exc)}, []


def _unreadable(spans: Sequence[Span]) -> list[str]:
    """The spans whose attributes or events cannot be read, each then read without them."""
    found = []
    for span in spans:
        try:
            span.attributes  # noqa: B018 - decodes them
        except DatasetError as exc:
            span.forget_details()
            found.append(
                f"span {span.name!r} ({span.span_id}) was read without its attributes: {exc}"
            )
    return found


def _workflow_name(root: Span | None) -> str:
    if root is None:
        return ""
    return root.name or root.service


def _enclosing(
    span: Span, by_id: dict[str, Span], steps: dict[str, _Step], known: dict[str, _Step | None]
) -> _Step | None:
    """The nearest agent step above ``span``; ``known`` holds the answer for each span walked
    (shared across calls), so every parent link is followed once: linear in the spans, and a
    cycle of parents (reported by :func:`~aieval.traces._complete.problems`) ends the walk."""
    path: list[str] = []
    on_path: set[str] = set()
    parent = by_id.get(span.parent_id) if span.parent_id else None
    found: _Step | None = None
    while parent is not None and parent.span_id not in on_path:
        if parent.span_id in known:
            found = known[parent.span_id]
            break
        found = steps.get(parent.span_id)
        if found is not None:
            break
        path.append(parent.span_id)
        on_path.add(parent.span_id)
        parent = by_id.get(parent.parent_id) if parent.parent_id else None
    for span_id in path:
        known[span_id] = found
    return found


def _executed(span: Span) -> dict[str, Any]:
    call = A.tool_call(span.attributes, span.name)
    call["executed"] = True
    error = _error(span)
    call["status"] = "failed" if error is not None else "success"
    if error is not None:
        call["error"] = error
    return call


def _error(span: Span) -> str | None:
    """Why a span failed (status ERROR or ``error.type``), ``None`` when it did not."""
    kind = A.error_type(span.attributes)
    if span.status != STATUS_ERROR and kind is None:
        return None
    detail = span.status_message or "; ".join(span.exceptions) or kind or "span status ERROR"
    return detail


def _step_result(step: _Step) -> StepResult:
    span = step.span
    requested = [c for c in step.requested if not _answered_handoff(c, step.handoffs)]
    calls = _with_requested(step.calls, requested)
    errors = [e for e in (_error(step.span) if step.agent else None, *map(_error, step.llm)) if e]
    metadata: dict[str, Any] = {"span_id": span.span_id}
    metadata |= _usage(step.llm)
    if calls:
        metadata["tool_calls"] = calls
    if step.handoffs:
        metadata["handoffs"] = list(step.handoffs)
    if step.scope == "run":
        metadata["agent_scope"] = "run"
    elif step.delegated_by is not None:
        metadata["delegated_by"] = step.delegated_by
    models = [m for m in (A.model(s.attributes) for s in step.llm) if m]
    own_model = A.model(span.attributes) if step.agent else None
    output = _step_output(step)
    return StepResult(
        name=step.name,
        status="failed" if errors else ("running" if not span.end_ns else "success"),
        agent_role=step.agent,
        model_used=models[-1] if models else own_model,
        inputs=A.input_value(span.attributes) if step.agent else None,
        outputs={"output": output} if output is not None else None,
        error=errors[0] if errors else None,
        error_type=_error_kind(step),
        start_time=span.start_ns / _NS,
        end_time=span.end_ns / _NS if span.end_ns else None,
        metadata=metadata,
    )


def _usage(llm: list[Span]) -> dict[str, Any]:
    """A step's ``model_calls`` (one per model-call span) and, when every call that answered
    reported them, its tokens and cost: an unreported part makes the sum unknown."""
    calls = [_model_call(span) for span in llm]
    if not calls:
        return {}
    usage: dict[str, Any] = {"model_calls": calls}
    tokens = token_total(usage)
    ins = [c.get("input_tokens") for c in calls]
    outs = [c.get("output_tokens") for c in calls]
    if tokens is not None and tokens.complete:
        if any(i is not None for i in ins):
            usage["input_tokens"] = tokens.input
        if any(o is not None for o in outs):
            usage["output_tokens"] = tokens.output
    costs = [c["cost"] for c in calls if "cost" in c]
    if costs and not unpriced(usage):
        usage["cost"] = sum(costs)
    return usage


def _model_call(span: Span) -> dict[str, Any]:
    input_tokens, output_tokens = A.tokens(span.attributes)
    call = {
        "model": A.model(span.attributes),
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost": A.cost(span.attributes),
        "latency_s": max(0, span.end_ns - span.start_ns) / _NS if span.end_ns else None,
        "error": _error(span),
    }
    return {k: v for k, v in call.items() if v is not None}


def _error_kind(step: _Step) -> str | None:
    for span in ([step.span] if step.agent else []) + step.llm:
        if _error(span) is not None:
            return A.error_type(span.attributes) or "span status ERROR"
    return None


def _step_output(step: _Step) -> Any:
    if step.agent is not None:
        own = A.output_text(step.span.attributes)
        if own is not None:
            return own
    for span in reversed(step.llm):
        text = A.output_text(span.attributes)
        if text is not None:
            return text
    return None


def _answered_handoff(call: dict[str, Any], handoffs: list[str]) -> bool:
    """A model's ``transfer_to_<agent>`` call that a handoff span carried out."""
    name = str(call.get("name", ""))
    return name.startswith("transfer_to_") and name.removeprefix("transfer_to_") in handoffs


def _scope_agents(
    steps: dict[str, _Step], by_id: dict[str, Span], roles: dict[str, A.Role | None]
) -> None:
    """Mark the orchestrating run agent (``scope`` "run") and the delegated agents (``scope``
    "delegated", ``delegated_by``); the others are the agents of the handoff path."""
    memo: dict[str, tuple[_Step | None, bool]] = {}
    above = {
        span_id: _agent_above(step.span, by_id, steps, roles, memo)
        for span_id, step in steps.items()
    }
    tops = [steps[i] for i, (parent, _) in above.items() if parent is None]
    run = tops[0] if len(tops) == 1 else None
    if run is not None and not any(p is run and not tool for p, tool in above.values()):
        run = None  # a lone agent, or one that only calls agents as tools
    if run is not None:
        run.scope = "run"
    for span_id, (parent, through_tool) in above.items():
        if parent is not None and (parent is not run or through_tool):
            steps[span_id].scope = "delegated"
            steps[span_id].delegated_by = parent.agent or parent.name


def _agent_above(
    span: Span,
    by_id: dict[str, Span],
    steps: dict[str, _Step],
    roles: dict[str, A.Role | None],
    memo: dict[str, tuple[_Step | None, bool]],
) -> tuple[_Step | None, bool]:
    """The nearest agent step above ``span``, and whether a tool span lies between them;
    ``memo`` holds the answer for each span walked, so each parent link is followed once."""
    path: list[str] = []
    on_path: set[str] = set()
    parent = by_id.get(span.parent_id) if span.parent_id else None
    found: _Step | None = None
    through_tool = False
    while parent is not None and parent.span_id not in on_path:
        if parent.span_id in steps:
            found = steps[parent.span_id]
            break
        if parent.span_id in memo:
            found, through_tool = memo[parent.span_id]
            break
        path.append(parent.span_id)
        on_path.add(parent.span_id)
        parent = by_id.get(parent.parent_id) if parent.parent_id else None
    for span_id in reversed(path):
        through_tool = through_tool or roles[span_id] == "tool"
        memo[span_id] = (found, through_tool)
    return found, through_tool


def _unname_containers(
    spans: Sequence[Span], by_id: dict[str, Span], roles: dict[str, A.Role | None]
) -> None:
    """An agent span that names no agent and holds other agent spans (the Agents SDK's
    ``Agent workflow``) is a container, not a step."""
    holders: set[str] = set()
    for span in spans:
        if roles[span.span_id] != "agent":
            continue
        parent = by_id.get(span.parent_id)
        while parent is not None and parent.span_id not in holders:
            holders.add(parent.span_id)
            parent = by_id.get(parent.parent_id)
    for span_id in holders:
        if roles[span_id] == "agent" and not A.names_agent(by_id[span_id].attributes):
            roles[span_id] = "chain"


def _with_requested(
    executed: list[dict[str, Any]], requested: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The executed calls, then each requested call no executed one answers (by id, else by
    name) as ``executed: false``."""
    ids = {c["id"] for c in executed if "id" in c}
    names = Counter(c["name"] for c in executed if "id" not in c)
    extra = []
    for call in requested:
        if call.get("id") is not None and call["id"] in ids:
            continue
        if (call.get("id") is None or not ids) and names[call["name"]] > 0:
            names[call["name"]] -= 1
            continue
        extra.append({**call, "executed": False})
    return [*executed, *extra]
