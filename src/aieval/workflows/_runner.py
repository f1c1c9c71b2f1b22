"""Workflow mode of the runner: recorded runs as a dataset, callable workflow targets, the
dataset/workflow compatibility check, per-sample evaluation and the run-level summary."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aieval._files import readable
from aieval._json import loads_strict
from aieval._records import SampleRecord, ScoreRecord
from aieval._tracefiles import is_trace_data
from aieval._types import Example
from aieval.core import GradeInput, GraderRequest, Output, Target, Usage, Verdict
from aieval.errors import ConfigError, IncompatibleDatasetError, WorkflowError
from aieval.grading import Profile, normalize
from aieval.runner import Aggregator, EfficiencySummary, EvaluationSummary, RunSummary
from aieval.workflows._definition import WorkflowDefinition, load_workflow
from aieval.workflows._efficiency import percentile
from aieval.workflows._evaluate import WorkflowEvaluation, evaluate_run, resolve_profile
from aieval.workflows._gates import check_compatible
from aieval.workflows._model import StepResult, WorkflowRun, load_run
from aieval.workflows._model_calls import call_records
from aieval.workflows._recorder import recording
from aieval.workflows._verdict import workflow_verdict

__all__ = ["EvaluationAggregator", "WorkflowGrader", "WorkflowMode", "compact_run"]

_MAX_LISTED = 5
#: The ``extra`` key where a sample stores its run's compact steps (its timeline).
WORKFLOW_RUN = "workflow_run"


class WorkflowMode:
    """Everything the runner needs to evaluate workflow runs with one definition and profile."""

    def __init__(
        self,
        workflow: WorkflowDefinition | str | Path | Mapping[str, Any] | None,
        profile: str | Path | Profile | None,
        *,
        enforce_hard_gates: bool = True,
    ) -> None:
        self.definition = load_workflow(workflow) if workflow is not None else None
        self.profile = resolve_profile(self.definition, profile)
        self.enforce_hard_gates = enforce_hard_gates

    def describe(self) -> dict[str, Any]:
        """What the run config records about the workflow and profile."""
        d = self.definition
        return {
            "id": d.id if d else None,
            "version": d.version if d else None,
            "source": d.source if d else None,
            "profile": self.profile.base or self.profile.id,
            "rubric_id": self.profile.rubric_id,
            "hard_gates_enforced": self.enforce_hard_gates,
        }

    @staticmethod
    def rows(dataset: Any) -> Any:
        """A folder of recorded run logs becomes rows (one per ``*.json``); anything else as is.

        Raises:
            ConfigError: the dataset is OpenTelemetry trace data, which the ``traces``
                evaluator reads (trace data selects it unless another evaluator is named).
        """
        if is_trace_data(dataset):
            raise ConfigError(
                f"evaluator: {dataset} is OpenTelemetry trace data, which the 'traces' "
                "evaluator reads and grades with the same workflow and profile: name "
                "evaluator 'traces', or name none (trace data selects it)"
            )
        if not isinstance(dataset, str | Path) or not Path(dataset).is_dir():
            return dataset
        folder = readable(dataset, "dataset")
        # each member is checked on its own: a "*.json" link may lead out of the roots
        files = [readable(f, f"dataset member {f.name}") for f in sorted(folder.glob("*.json"))]
        if not files:
            raise WorkflowError(f"{dataset}: holds no *.json run logs")
        rows = []
        for file in files:
            run = load_run(file)  # validates, naming the file and field on error
            # The log itself (not its path) goes into the row, so the dataset version depends on
            # the runs' content only and a copy of the folder elsewhere can resume the run.
            recorded = loads_strict(file.read_text(encoding="utf-8"))
            rows.append({"id": file.stem, "input": run.inputs or {}, "run": recorded})
        return rows

    def check(self, examples: Any) -> None:
        """Refuse a dataset that lacks a required input in any row, listing the missing inputs."""
        if self.definition is None or not self.definition.required_inputs:
            return
        missing: dict[str, list[str]] = {}
        for example in examples:
            result = check_compatible(self.definition, _available(example))
            for name in result.evidence.get("missing_inputs", []):
                missing.setdefault(name, []).append(example.id)
            for problem in result.evidence.get("enum_violations", []):
                missing.setdefault(f"valid {problem}", []).append(example.id)
        if missing:
            listed = "; ".join(f"{name} (rows {_ids(ids)})" for name, ids in missing.items())
            raise IncompatibleDatasetError(
                f"dataset is incompatible with workflow {self.definition.id!r} "
                f"({self.definition.source}): missing required inputs: {', '.join(missing)}; "
                f"where: {listed}. Add these fields to every row or give them a default.",
                missing_inputs=missing,
            )

    def wrap(self, target: Target | None) -> Target:
        """The target producing a :class:`WorkflowRun` per example (recorded when ``None``)."""
        return RecordedRunTarget() if target is None else WorkflowTarget(target, self._name())

    def evaluate(
        self,
        example: Example,
        value: Any,
        error: str | None,
        scores: Mapping[str, ScoreRecord],
    ) -> WorkflowEvaluation:
        """The evaluation of one sample's run (``value``: what the target produced)."""
        run = (
            value
            if isinstance(value, WorkflowRun)
            else _failed_run(
                example, self._name(), error or "the target produced no workflow run", []
            )
        )
        return evaluate_run(
            run,
            workflow=self.definition,
            sample=_available(example),
            profile=self.profile,
            scores=scores,
            enforce_hard_gates=self.enforce_hard_gates,
        )

    def grader(self, request: GraderRequest) -> WorkflowGrader:
        """The grader deciding each sample by its workflow evaluation (its grade and gates)."""
        return WorkflowGrader(self)

    def aggregator(self, scorer_names: list[str]) -> EvaluationAggregator:
        return EvaluationAggregator(scorer_names)

    def _name(self) -> str:
        return self.definition.id if self.definition is not None else "workflow"


class WorkflowGrader:
    """Grades a sample by evaluating its workflow run: the verdict carries the grade, gates,
    criteria and weighted score (from the typed evaluation), and the whole evaluation as its
    ``workflow`` detail."""

    name = "workflow"

    def __init__(self, mode: WorkflowMode) -> None:
        self.mode = mode

    def grade(self, sample: GradeInput) -> Verdict:
        """The verdict on one sample's workflow run."""
        record = sample.record
        evaluation = self.mode.evaluate(sample.example, sample.value, record.error, record.scores)
        return workflow_verdict(evaluation, record, self.name)


class RecordedRunTarget(Target):
    """Runs recorded in the data (a ``run`` object or file path per row): nothing is called."""

    name = "recorded-run"

    async def produce(self, example: Example) -> Output:
        ref = example.fields.get("run")
        if isinstance(ref, Mapping):
            run = WorkflowRun.from_dict(ref, source=f"row {example.id}")
        elif isinstance(ref, str):
            run = load_run(ref)
        elif example.prediction is not None:  # single-turn: the recorded answer is the output
            run = WorkflowRun(example.id, outputs={"output": example.prediction})
        else:
            return Output(
                None,
                error="row has no recorded 'run' and no target was given",
                extra={WORKFLOW_RUN: None},
            )
        return Output(
            _text(run),
            run,
            error=run.error if run.status != "success" else None,
            latency_s=run.duration_s,
            # the model calls a trace recorded: the sample's tokens and cost are theirs
            calls=call_records(s.metadata for s in run.steps),
            usage=_usage(run),
            extra={WORKFLOW_RUN: compact_run(run)},
        )


class WorkflowTarget(Target):
    """Wraps a callable target: records its steps and turns what it returns into a run."""

    def __init__(self, inner: Target, workflow_name: str) -> None:
        self.inner = inner
        self.name = inner.name
        self.workflow_name = workflow_name

    async def produce(self, example: Example) -> Output:
        with recording() as steps:
            output = await self.inner.produce(example)
        if output.error is not None:
            run = _failed_run(example, self.workflow_name, output.error, steps)
        else:
            run = _as_run(output.value, example, self.workflow_name, steps, output.latency_s)
        return Output(
            _text(run),
            run,
            error=output.error,
            latency_s=output.latency_s,
            calls=output.calls,
            usage=_usage(run),
            extra={WORKFLOW_RUN: compact_run(run)},
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class EvaluationAggregator(Aggregator):
    """The run summary plus grade distribution, gate failure rates and layer-3 percentiles."""

    def __init__(self, scorer_names: list[str]) -> None:
        super().__init__(scorer_names)
        self.grades: dict[str, int] = {}
        self.gate_failures: dict[str, int] = {}
        self.evaluated = 0
        self.graded_passed = 0
        self.runtimes: list[float] = []
        self.amplifications: list[float] = []
        self.slo: Mapping[str, tuple[float, float]] = {}
        self.missing: dict[str, int] = {}

    def add(self, sample: SampleRecord) -> None:
        super().add(sample)
        ev = sample.verdict.workflow_detail if sample.verdict is not None else None
        if ev is None:
            return
        self.evaluated += 1
        self.graded_passed += ev.passed
        if ev.grade is not None:
            self.grades[ev.grade] = self.grades.get(ev.grade, 0) + 1
        for gate, ok in ev.hard_gates.items():
            self.gate_failures[gate] = self.gate_failures.get(gate, 0) + (not ok)
        for name in ev.missing_criteria:
            self.missing[name] = self.missing.get(name, 0) + 1
        if ev.latency_s is not None:
            self.runtimes.append(ev.latency_s)
        if ev.retry_amplification is not None:
            self.amplifications.append(ev.retry_amplification)
        self.slo = self.slo or ev.slo

    def summary(self) -> RunSummary:
        n = self.evaluated
        p95 = percentile(self.runtimes, 0.95)
        latency_slo = self.slo.get("latency_s")  # (good, bad)
        evaluation = EvaluationSummary(
            runs=n,
            passed=self.graded_passed,
            pass_rate=self.graded_passed / n if n else None,
            grades={g: self.grades.get(g, 0) for g in ("A", "B", "C", "D", "F")},
            gate_failure_rates={g: c / n for g, c in sorted(self.gate_failures.items())}
            if n
            else {},
            missing_criteria=dict(sorted(self.missing.items())),
            efficiency=EfficiencySummary(
                runtime_p50_s=percentile(self.runtimes, 0.50),
                runtime_p95_s=p95,
                runtime_p95_norm=normalize(
                    "lower_is_better", p95, slo_good=latency_slo[0], slo_bad=latency_slo[1]
                )
                if p95 is not None and latency_slo
                else None,
                retry_amplification=sum(self.amplifications) / len(self.amplifications)
                if self.amplifications
                else None,
            ),
        )
        return super().summary().replace(evaluation=evaluation)


def compact_run(run: WorkflowRun) -> dict[str, Any]:
    """A run's status, duration and one small entry per step (what a timeline needs).

    Example:
        >>> run = WorkflowRun.from_dict({"workflow_id": "r", "steps": [{"step_name": "plan",
        ...     "agent_role": "planner", "metadata": {"tool_calls": [{"name": "search"}]}}]})
        >>> compact_run(run)["steps"][0]["tool_calls"]
        1
    """
    return {
        "status": run.status,
        "duration_s": run.duration_s,
        "steps": [
            {
                "name": step.name,
                "agent": step.agent_role,
                "status": step.status,
                "duration_s": step.duration_s,
                "start_s": _offset(run, step),
                "retries": step.retry_count,
                "model": step.model_used,
                "tool_calls": _tool_call_count(step),
                "error": step.error,
            }
            for step in run.steps
        ],
    }


def _offset(run: WorkflowRun, step: StepResult) -> float | None:
    """Seconds from the run's start (or its first step's) to this step's start, when recorded.

    Parallel steps overlap on a timeline only if their real start times are kept.
    """
    starts = [s.start_time for s in run.steps if s.start_time is not None]
    origin = run.start_time if run.start_time is not None else min(starts, default=None)
    if origin is None or step.start_time is None:
        return None
    return round(step.start_time - origin, 6)


def _tool_call_count(step: StepResult) -> int:
    count = 0
    for holder in (step.metadata, step.outputs):
        found = holder.get("tool_calls") if isinstance(holder, Mapping) else None
        if isinstance(found, list):
            count += len(found)
    return count


def _ids(ids: list[str]) -> str:
    more = ", ..." if len(ids) > _MAX_LISTED else ""
    return ", ".join(ids[:_MAX_LISTED]) + more


def _available(example: Example) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    if isinstance(example.input, Mapping):
        merged.update(example.input)
    merged.update({k: v for k, v in example.fields.items() if k not in ("input", "run", "id")})
    return merged


def _as_run(
    value: Any, example: Example, name: str, steps: list[Any], latency: float | None
) -> WorkflowRun:
    if isinstance(value, WorkflowRun):
        if not value.steps and steps:
            value.steps = list(steps)
        return value
    outputs = dict(value) if isinstance(value, Mapping) else {"output": value}
    failed = any(s.status == "failed" for s in steps)
    return WorkflowRun(
        workflow_id=example.id,
        workflow_name=name,
        status="failed" if failed else "success",
        outputs=outputs,
        steps=list(steps),
        inputs=_available(example),
        metadata={"duration_s": latency} if latency is not None else {},
    )


def _failed_run(example: Example, name: str, error: str, steps: list[Any]) -> WorkflowRun:
    return WorkflowRun(
        workflow_id=example.id,
        workflow_name=name,
        status="failed",
        outputs=None,
        steps=list(steps),
        inputs=_available(example),
        error=error,
    )


def _usage(run: WorkflowRun) -> Usage:
    return Usage(run.input_tokens, run.output_tokens, run.cost, run.retries)


def _text(run: WorkflowRun) -> str | None:
    if run.outputs is None:
        return None
    return json.dumps(run.outputs, ensure_ascii=False, default=str)
