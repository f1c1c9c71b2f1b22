"""``evaluate_run``: gates, criteria, grade and explanation for one workflow run.

Criterion raw scores come from, in order of precedence: the sample's scorer results (by
criterion name), the run's ``metadata.scores``, and the efficiency layer (criteria with a
``metric``, normalized against the profile's SLO). A criterion with no score never counts as 0
or 1: it is listed under ``missing_criteria``. The run is then graded over the scored criteria,
and it passes only when the evaluation block sets ``allow_missing_criteria: true``; otherwise
``passed`` is false, the grade is F and the reason says which criteria lack a score.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aieval._keys import suggestion
from aieval.errors import ConfigError, FormulaError
from aieval.grading import (
    GateResult,
    GradeResult,
    Profile,
    Rubric,
    coverage_percent,
    load_profile,
    normalize,
)
from aieval.workflows._definition import WorkflowDefinition, load_workflow
from aieval.workflows._efficiency import efficiency
from aieval.workflows._gates import run_gates
from aieval.workflows._model import WorkflowRun
from aieval.workflows._rollup import (
    agent_rollup,
    step_details,
    step_score_warnings,
    step_scores,
)
from aieval.workflows._trace_criteria import TraceCriterion, trace_criteria

__all__ = ["DEFAULT_PROFILE", "WorkflowEvaluation", "evaluate_run", "resolve_profile"]

#: The profile used when neither the call nor the definition names one (DAG/review workflows).
DEFAULT_PROFILE = "B"


@dataclass(slots=True)
class WorkflowEvaluation:
    """The graded, explained result of one workflow run (its ``to_dict`` is the stored payload).

    Attributes:
        run_id, workflow, workflow_version: what was evaluated.
        profile: the effective profile id; ``rubric_id``/``rubric_version`` when a rubric set
            the criteria.
        weighted_score: 0..100 over the scored criteria (``None`` when none had a score).
        grade, passed, pass_threshold, reason, reasons, placement: the verdict and why.
        hard_gates: ``{gate: passed}``; ``gate_failures`` the failed ones with reasons.
        criteria: per criterion: raw, normalized, adjusted, weight, formula id, floor, floor
            passed, where the floor came from (``floor_source``: ``criterion`` or ``default``;
            ``floor_default``: the category whose default floor applied, such as
            ``correctness``), and where the score came from.
        missing_criteria: criteria without a usable score, with why.
        floor_violations: critical floors missed; ``grade_capped`` when they capped the grade.
        step_scores: per step, its recorded scores; ``agents`` the per-agent roll-up. A step
            score that is not a finite number is left out of both, with a warning.
        efficiency: layer-3 metrics, raw and normalized, and budget checks.
        warnings: what the verdict alone does not show (failed gates not enforced, step scores
            left out because they are not numbers, ...).
        hard_gates_enforced: ``False`` when failed gates were recorded but did not force F.
        score_coverage: which share of the profile's weights the weighted score covers:
            ``share`` (0..1), ``scored`` and ``unscored`` criterion names, ``text`` (e.g.
            ``100.00 over 10% of the weights; 4 of 5 criteria unscored: ...``) and ``detail``
            (the same without the score).
        step_details: per step, in order: name, agent, status, duration, model calls, tokens
            and tool calls (what ``aieval show`` prints per run or trace).
        graded: the typed grading behind ``criteria`` and ``floor_violations`` (``None`` when
            no criterion was scored); not part of the stored payload.
    """

    run_id: str
    workflow: str
    workflow_version: str | None
    profile: str
    rubric_id: str | None
    rubric_version: str | None
    weighted_score: float | None
    grade: str
    passed: bool
    pass_threshold: float
    reason: str
    reasons: list[str]
    placement: list[str]
    hard_gates: dict[str, bool]
    gate_failures: list[GateResult]
    criteria: list[dict[str, Any]]
    missing_criteria: list[dict[str, str]]
    floor_violations: list[dict[str, Any]]
    grade_capped: bool
    step_scores: dict[str, dict[str, float]]
    agents: dict[str, dict[str, Any]]
    efficiency: dict[str, Any]
    status: str = ""
    duration_s: float | None = None
    warnings: list[str] = field(default_factory=list)
    gate_results: list[GateResult] = field(default_factory=list)
    effective_profile: dict[str, Any] | None = None
    hard_gates_enforced: bool = True
    score_coverage: dict[str, Any] | None = None
    step_details: list[dict[str, Any]] = field(default_factory=list)
    graded: GradeResult | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: the evaluation payload stored with the run."""
        data = dataclasses.asdict(dataclasses.replace(self, graded=None))
        del data["graded"]
        data["gate_failures"] = [_gate_dict(g) for g in self.gate_failures]
        data["gate_results"] = [_gate_dict(g) for g in self.gate_results]
        return data


def evaluate_run(
    run: WorkflowRun | Mapping[str, Any],
    *,
    workflow: WorkflowDefinition | str | Path | Mapping[str, Any] | None = None,
    sample: Mapping[str, Any] | None = None,
    profile: str | Path | Profile | None = None,
    scores: Mapping[str, Any] | None = None,
    gates: Mapping[str, Any] | None = None,
    allow_missing_criteria: bool | None = None,
    enforce_hard_gates: bool = True,
) -> WorkflowEvaluation:
    """Grade one workflow run: gates, criteria, grade, per-step and per-agent detail.

    Args:
        run: the run (or its recorded JSON object).
        workflow: its definition (object, file or mapping); without one, no outputs are
            required, no input is declared, every step is critical, and there is no schema.
        sample: the dataset row the run answered (its fields are the inputs it supplied).
        profile: overrides the definition's profile (id, family, file or :class:`Profile`);
            the definition's overrides and rubric still apply to a profile given by name.
        scores: raw criterion scores by name (numbers, or scorer results whose ``raw`` is
            used when set, else their ``value``).
        gates: inputs or verdicts for the profile's own gates, by gate name.
        allow_missing_criteria: overrides the definition's ``allow_missing_criteria``.
        enforce_hard_gates: with ``False``, gates are still evaluated and reported (in
            ``hard_gates``, ``gate_failures`` and a warning) but a failed one no longer forces
            grade F or a fail; exploratory runs use it to see the quality behind a gate.

    Example:
        >>> ev = evaluate_run({"workflow_id": "r1", "overall_status": "success",
        ...     "final_output": {"answer": "42"}, "metadata": {"duration_s": 4}},
        ...     profile="B", scores={"correctness": 5, "completeness": 4,
        ...     "tool_data_precision": 1.0, "documentation": 4})
        >>> ev.grade, ev.passed, ev.weighted_score
        ('A', True, 91.25)
    """
    the_run = run if isinstance(run, WorkflowRun) else WorkflowRun.from_dict(run)
    definition = load_workflow(workflow) if workflow is not None else None
    the_profile = resolve_profile(definition, profile)
    spec = definition.evaluation if definition is not None else None
    allow = (
        allow_missing_criteria
        if allow_missing_criteria is not None
        else bool(spec and spec.allow_missing_criteria)
    )
    layer3 = efficiency(the_run, the_profile, spec.budgets if spec else None)
    gate_results = run_gates(the_run, definition, sample, the_profile.gate_names, gates)
    the_profile = _prenormalized(the_profile, scores)
    gate_inputs = {**(spec.gate_inputs if spec else {}), **(gates or {})}
    traced = trace_criteria(the_run, gate_inputs, [c.name for c in the_profile.criteria])
    raw, sources, missing = _raw_scores(the_profile, scores, the_run, layer3, traced)
    graded = _grade(the_profile, _enforced(gate_results, enforce_hard_gates), raw)
    evaluation = _assemble(
        the_run, definition, the_profile, graded, gate_results, raw, sources, missing, allow, layer3
    )
    for criterion in evaluation.criteria:  # what a trace-computed score counted
        if criterion["source"] == "trace":
            criterion["evidence"] = traced[criterion["name"]].why
    if not enforce_hard_gates:
        _record_unenforced(evaluation, gate_results)
    return evaluation


def _enforced(gates: list[GateResult], enforce: bool) -> list[GateResult]:
    """The gates the grade sees: as evaluated, or all passing when gates are not enforced."""
    if enforce:
        return gates
    return [dataclasses.replace(g, passed=True) for g in gates]


def _record_unenforced(evaluation: WorkflowEvaluation, gates: list[GateResult]) -> None:
    """Report the real gate verdicts on an evaluation graded without enforcing them."""
    failures = [g for g in gates if not g.passed]
    evaluation.hard_gates_enforced = False
    evaluation.hard_gates = {g.name: g.passed for g in gates}
    evaluation.gate_results = list(gates)
    evaluation.gate_failures = failures
    evaluation.warnings.extend(
        f"hard gate {g.name} failed (not enforced): {g.reason}" for g in failures
    )


def resolve_profile(
    definition: WorkflowDefinition | None, given: str | Path | Profile | None = None
) -> Profile:
    """The effective profile: ``given``, else the definition's, else :data:`DEFAULT_PROFILE`,
    with the definition's rubric (which keeps the profile's efficiency criteria), then its
    overrides applied.

    Raises:
        ConfigError: an override names an unknown criterion or has a bad value (the message
            names the definition's file and ``evaluation``).
    """
    spec = definition.evaluation if definition is not None else None
    if isinstance(given, Profile):
        return given
    name = (
        given if given is not None else (spec.profile if spec and spec.profile else DEFAULT_PROFILE)
    )
    loaded = load_profile(name)
    if spec is not None and spec.rubric is not None:
        loaded = _with_rubric(loaded, spec.rubric)
    source = definition.source if definition is not None else "<workflow>"
    if spec is not None and spec.overrides:
        try:
            loaded = load_profile(loaded, overrides=spec.overrides)
        except ConfigError as exc:
            raise ConfigError(f"{source}: field 'evaluation': {exc}") from None
    if spec is not None:
        # after the overrides, so inputs for a gate that extra_gates adds are accepted
        _check_gate_inputs(spec.gate_inputs, loaded, source)
    return loaded


def _check_gate_inputs(inputs: Mapping[str, Any], profile: Profile, source: str) -> None:
    """Inputs for a gate the profile does not run would be ignored: refuse them (a typo)."""
    gates = profile.gate_names
    for name in inputs:
        if name not in gates:
            raise ConfigError(
                f"{source}: field 'evaluation.gates.{name}': profile {profile.base or profile.id} "
                f"has no such gate; {suggestion(name, gates)}"
            )


def _with_rubric(profile: Profile, rubric: Rubric) -> Profile:
    efficiency_criteria = [c for c in profile.criteria if c.kind == "efficiency"]
    with_rubric = profile.with_rubric(rubric)
    if not efficiency_criteria:
        return with_rubric
    # a rubric names quality criteria; keep the profile's layer 3
    data = with_rubric.model_dump()
    names = {c["name"] for c in data["criteria"]}
    data["criteria"] += [c.model_dump() for c in efficiency_criteria if c.name not in names]
    return Profile.model_validate(data)


def _raw_scores(
    profile: Profile,
    scores: Mapping[str, Any] | None,
    run: WorkflowRun,
    layer3: dict[str, Any],
    traced: Mapping[str, TraceCriterion],
) -> tuple[dict[str, Any], dict[str, str], list[dict[str, str]]]:
    recorded = run.metadata.get("scores")
    recorded = recorded if isinstance(recorded, Mapping) else {}
    raw: dict[str, Any] = {}
    sources: dict[str, str] = {}
    missing: list[dict[str, str]] = []
    for c in profile.criteria:
        value, source = None, ""
        if scores is not None and c.name in scores:
            value, source = _raw_of(scores[c.name]), "scorer"
        elif c.name in recorded:
            value, source = _raw_of(recorded[c.name]), "run"
        elif c.name in traced:
            value, source = traced[c.name].value, "trace"
        elif c.kind == "efficiency" and c.metric is not None:
            value, source = layer3["raw"].get(c.metric), "efficiency"
        if value is None:
            why = "no score from a scorer, the run's metadata.scores or the efficiency layer"
            if c.name in traced:
                why = f"no score from a scorer or the run's metadata.scores; {traced[c.name].why}"
            missing.append({"name": c.name, "reason": why})
            continue
        problem = _check_raw(profile, c.name, value)
        if problem is not None:
            missing.append({"name": c.name, "reason": problem})
            continue
        raw[c.name], sources[c.name] = value, source
    return raw, sources, missing


def _prenormalized(profile: Profile, scores: Mapping[str, Any] | None) -> Profile:
    """A scorer result with no ``raw`` carries a value its scorer already normalized to 0..1:
    its criterion reads it with ``zero_one`` (recorded as such) rather than its raw formula."""
    names = {
        name
        for name, value in (scores or {}).items()
        if hasattr(value, "value") and hasattr(value, "raw") and value.raw is None
    }
    if not names & {c.name for c in profile.criteria}:
        return profile
    data = profile.model_dump()
    for c in data["criteria"]:
        if c["name"] in names:
            c.update(formula_id="zero_one", params={}, metric=None)
    return Profile.model_validate(data)


def _raw_of(value: Any) -> Any:
    if isinstance(value, Mapping):
        for key in ("raw", "raw_score", "value", "score"):
            if value.get(key) is not None:
                return value[key]
        return None
    if hasattr(value, "value") and hasattr(value, "raw"):  # Score / ScoreRecord
        return value.raw if value.raw is not None else value.value
    return value


def _check_raw(profile: Profile, name: str, value: Any) -> str | None:
    score = next(
        s for s in profile.criterion_scores(_placeholders(profile, name, value)) if s.name == name
    )
    try:
        normalize(score.formula_id, value, **score.params)
    except FormulaError as exc:
        return f"unusable score {value!r}: {exc}"
    return None


def _placeholders(profile: Profile, name: str, value: Any) -> dict[str, Any]:
    return {c.name: (value if c.name == name else 0) for c in profile.criteria}


def _grade(
    profile: Profile, gate_results: list[GateResult], raw: dict[str, Any]
) -> GradeResult | None:
    if not raw:
        return None
    scored = profile
    if len(raw) < len(profile.criteria):
        data = profile.model_dump()
        data["criteria"] = [c for c in data["criteria"] if c["name"] in raw]
        try:
            scored = Profile.model_validate(data)
        except ValueError:
            return None
    try:
        return scored.grade(hard_gates=gate_results, scores=raw)
    except ConfigError:
        return None


def _assemble(
    run: WorkflowRun,
    definition: WorkflowDefinition | None,
    profile: Profile,
    graded: GradeResult | None,
    gate_results: list[GateResult],
    raw: dict[str, Any],
    sources: dict[str, str],
    missing: list[dict[str, str]],
    allow: bool,
    layer3: dict[str, Any],
) -> WorkflowEvaluation:
    gates = graded.gate_results if graded is not None else gate_results
    failures = [g for g in gates if not g.passed]
    grade, passed, reason = "F", False, "no_criteria_scored"
    reasons = [f"hard gate {g.name} failed: {g.reason}" for g in failures]
    placement: list[str] = []
    criteria: list[dict[str, Any]] = []
    floors: list[dict[str, Any]] = []
    capped = False
    if graded is not None:
        grade, passed, reason = graded.grade, graded.passed, graded.reason
        reasons, placement = list(graded.reasons), list(graded.placement)
        criteria = [_criterion(c, sources) for c in graded.criteria]
        floors = [dataclasses.asdict(f) for f in graded.floor_failures]
        capped = (
            bool(graded.floor_failures) and not graded.gate_failures and graded.band != graded.grade
        )
    else:
        reasons.append("no criterion has a usable score")
    coverage = score_coverage(profile, raw, graded.weighted_score if graded else None)
    if missing:
        names = ", ".join(m["name"] for m in missing)
        if placement:  # the band line: say what share of the weights the score stands on
            placement[0] += f" {coverage['detail']}"
        if allow:
            placement.append(f"graded over the scored criteria only; no score for: {names}")
        else:
            grade, passed = "F", False
            reason = reason if failures else "missing_criteria"
            reasons.append(
                f"criteria without a usable score: {names}; score them, or set "
                "evaluation.allow_missing_criteria: true to grade over the scored ones"
            )
    return WorkflowEvaluation(
        run_id=run.run_id or run.workflow_id,
        workflow=definition.id if definition is not None else run.workflow_name,
        workflow_version=definition.version if definition is not None else run.version,
        profile=profile.base or profile.id,
        rubric_id=profile.rubric_id,
        rubric_version=_rubric_version(definition),
        weighted_score=graded.weighted_score if graded is not None else None,
        grade=grade,
        passed=passed,
        pass_threshold=profile.pass_threshold,
        reason=reason,
        reasons=reasons,
        placement=placement,
        hard_gates={g.name: g.passed for g in gates},
        gate_failures=failures,
        criteria=criteria,
        missing_criteria=missing,
        floor_violations=floors,
        grade_capped=capped,
        step_scores=step_scores(run),
        agents=agent_rollup(run),
        efficiency=layer3,
        status=run.status,
        duration_s=run.duration_s,
        warnings=[*(graded.warnings if graded is not None else []), *step_score_warnings(run)],
        gate_results=list(gates),
        effective_profile=graded.profile if graded is not None else None,
        score_coverage=coverage,
        step_details=step_details(run),
        graded=graded,
    )


def score_coverage(
    profile: Profile, raw: Mapping[str, Any], weighted_score: float | None
) -> dict[str, Any]:
    """The share of the profile's weights that the weighted score stands on (scored criteria's
    weights over all weights), the criteria left out, and the statement shown beside the score.

    Example:
        >>> p = load_profile("D")
        >>> score_coverage(p, {"efficiency": 4.0}, 100.0)["text"]  # doctest: +ELLIPSIS
        '100.00 over 10% of the weights; 4 of 5 criteria unscored: tool_selection_accuracy, ...'
    """
    total = sum(c.weight for c in profile.criteria)
    scored = [c.name for c in profile.criteria if c.name in raw]
    unscored = [c.name for c in profile.criteria if c.name not in raw]
    share = sum(c.weight for c in profile.criteria if c.name in raw) / total if total else 0.0
    score = "-" if weighted_score is None else f"{weighted_score:.2f}"
    detail = f"over {coverage_percent(share)} of the weights"
    if unscored:
        detail += (
            f"; {len(unscored)} of {len(profile.criteria)} criteria unscored: {', '.join(unscored)}"
        )
    return {
        "share": share,
        "scored": scored,
        "unscored": unscored,
        "detail": detail,
        "text": f"{score} {detail}",
    }


def _criterion(c: Any, sources: Mapping[str, str]) -> dict[str, Any]:
    return {
        "name": c.name,
        "raw": c.raw_score,
        "normalized": c.norm,
        "adjusted": c.adjusted_norm,
        "weight": c.weight,
        "formula_id": c.formula_id,
        "floor": c.critical_floor,
        "floor_passed": None if c.critical_floor is None else not c.floor_failed,
        "floor_source": c.floor_source,
        "floor_default": c.floor_category,
        "kind": c.kind,
        "source": sources.get(c.name),
    }


def _rubric_version(definition: WorkflowDefinition | None) -> str | None:
    if definition is None or definition.evaluation.rubric is None:
        return None
    return definition.evaluation.rubric.version


def _gate_dict(g: GateResult) -> dict[str, Any]:
    return {"name": g.name, "passed": g.passed, "reason": g.reason, "evidence": g.evidence}
