"""Tasks against an MCP server, for each client model, k times each; and the verdict between
two versions of the server.

Each model's tasks are one stored run (the ``mcp`` evaluator: a conversation run whose tools are
the server's), so ``aieval show``, reports, the viewer and ``aieval compare`` read it as any
conversation run. The figures per model (pass@k and pass^k over the tasks with intervals, the
recovery from tool errors) are read back from the stored samples.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aieval._sync import blocking_twin
from aieval.core import TRAJECTORY_KEY, SampleRecord, ToolUse, Trajectory
from aieval.errors import ConfigError
from aieval.mcp._evaluator import MCP_KEY
from aieval.mcp._inject import ErrorInjection
from aieval.mcp._server import McpServer
from aieval.mcp._tasks import TOOL_USE, McpTask, load_tasks, task_of
from aieval.providers import Provider
from aieval.report import PromotionPolicy, compare_runs
from aieval.runner import run_async
from aieval.stats import ConfidenceInterval, bootstrap_ci, pass_at_k, pass_hat_k
from aieval.store import Store

__all__ = [
    "ModelFigures",
    "ModelSpec",
    "ServerVerdict",
    "TaskRuns",
    "compare_servers",
    "figures_of",
    "run_tasks",
    "run_tasks_async",
]


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A client model: a provider (a name or preset, or a :class:`~aieval.providers.Provider`
    object: the author's own, a scripted one) and its model, with an endpoint and the
    environment variable of its key when the provider needs them."""

    provider: str | Provider
    model: str
    base_url: str | None = None
    api_key_env: str | None = None

    @classmethod
    def parse(cls, text: str, **options: Any) -> ModelSpec:
        """``PROVIDER:MODEL`` (``openai:gpt-4o-mini``, ``vllm:llama3.1``)."""
        provider, _, model = text.partition(":")
        if not provider or not model:
            raise ConfigError(f"--model {text!r}: expected PROVIDER:MODEL, e.g. openai:gpt-4o-mini")
        return cls(provider, model, **options)

    @property
    def label(self) -> str:
        """``provider:model`` (a provider object by its ``name``)."""
        provider = self.provider
        if not isinstance(provider, str):
            provider = str(getattr(provider, "name", None) or type(provider).__name__)
        return f"{provider}:{self.model}"


@dataclass(frozen=True, slots=True)
class ModelFigures:
    """One model's figures over its run.

    Attributes:
        model: ``provider:model``.
        run_id: the stored run.
        tasks: tasks played; ``k``: answers per task (epochs).
        samples: answers stored; ``errors``: those that failed (a server that hung or died,
            the model's call failed).
        pass_at_k: the mean over tasks of pass@k (at least one of k answers passed), with a
            95% bootstrap interval over tasks; ``None`` when no task has k answers.
        pass_hat_k: the same for pass^k (all k passed).
        with_tool_errors: answers with at least one tool call that failed (the tool's own
            error or an injected one); ``recovered``: those of them that still passed.
        injected: injected errors over the run.
        tools: per tool the server offers that was called, ``(calls, failed calls)`` over the
            run's answers (the full per-tool figures are in the run's reports).
    """

    model: str
    run_id: str
    tasks: int
    k: int
    samples: int
    errors: int
    pass_at_k: ConfidenceInterval | None
    pass_hat_k: ConfidenceInterval | None
    with_tool_errors: int
    recovered: int
    injected: int
    tools: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def recovery_rate(self) -> float | None:
        """Recovered over answers with a tool error (``None`` without one)."""
        return self.recovered / self.with_tool_errors if self.with_tool_errors else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "run_id": self.run_id,
            "tasks": self.tasks,
            "k": self.k,
            "samples": self.samples,
            "errors": self.errors,
            "pass_at_k": None if self.pass_at_k is None else self.pass_at_k.to_dict(),
            "pass_hat_k": None if self.pass_hat_k is None else self.pass_hat_k.to_dict(),
            "with_tool_errors": self.with_tool_errors,
            "recovered": self.recovered,
            "recovery_rate": self.recovery_rate,
            "injected": self.injected,
            "tools": {name: {"calls": c, "errors": e} for name, (c, e) in self.tools.items()},
        }


@dataclass(frozen=True, slots=True)
class TaskRuns:
    """What :func:`run_tasks` gives: the server, and one stored run with its figures per model."""

    server: str
    models: tuple[ModelFigures, ...]

    def run_ids(self) -> dict[str, str]:
        return {m.model: m.run_id for m in self.models}

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "mcp_tasks",
            "server": self.server,
            "models": [m.to_dict() for m in self.models],
        }


async def run_tasks_async(
    server: McpServer,
    tasks: str | Path | Sequence[McpTask] | Sequence[Mapping[str, Any]],
    models: Sequence[ModelSpec | str],
    *,
    k: int = 5,
    name: str = "mcp",
    store: Store | str | Path | bool = True,
    inject: ErrorInjection | None = None,
    concurrency: int = 4,
    temperature: float | None = 0.0,
    seed: int | None = None,
    system: str | None = None,
    max_tool_rounds: int | None = None,
) -> TaskRuns:
    """Play every task ``k`` times for each model with the server's tools; one run per model.

    Args:
        server: the MCP server under test (the author's command or URL).
        tasks: a task file, :class:`McpTask` objects or task rows.
        models: ``PROVIDER:MODEL`` texts or :class:`ModelSpec` objects.
        k: answers per task (the run's epochs).
        name: the runs' name prefix (each run is ``NAME [PROVIDER:MODEL]``).
        store: where the runs are stored (as ``run()`` takes it).
        inject: injected tool errors (:func:`~aieval.mcp.inject_errors`), or none.
        seed: sent to each model as the request's ``seed`` when given.
    """
    if k < 1:
        raise ConfigError(f"k: expected at least 1, got {k}")
    specs = [m if isinstance(m, ModelSpec) else ModelSpec.parse(m) for m in models]
    if not specs:
        raise ConfigError("models: give at least one client model (--model PROVIDER:MODEL)")
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ConfigError("models: a model is given twice")
    played = _tasks(tasks)
    # each repeat is a row of its own (``ID@N``): two runs then pair by task and repeat, which
    # is how the verdict between two server versions is paired (a run of epochs would pair by
    # task only, its repeats averaged)
    rows = [t.scenario_row(answer) for t in played for answer in range(1, k + 1)]
    settings: dict[str, Any] = {"mcp": {"server": server.to_config()}}
    if inject is not None:
        settings["mcp"]["inject"] = inject.to_config()
    if max_tool_rounds is not None:
        settings["max_tool_rounds"] = max_tool_rounds
    figures = []
    for spec in specs:
        params: dict[str, Any] = {} if seed is None else {"seed": seed}
        if temperature is not None:
            params["temperature"] = temperature
        result = await run_async(
            name=f"{name} [{spec.label}]",
            dataset=rows,
            scorers=[],
            provider=spec.provider,
            model=spec.model,
            store=store,
            evaluator="mcp",
            conversation=settings,
            # each of the k answers is asked anew: a cached answer would repeat the first
            cache=False,
            concurrency=concurrency,
            base_url=spec.base_url,
            api_key_env=spec.api_key_env,
            system_prompt=system,
            params=params,
        )
        figures.append(figures_of(spec.label, result.id, result.samples, k))
    return TaskRuns(server.label, tuple(figures))


run_tasks = blocking_twin(
    run_tasks_async,
    name="run_tasks",
    thread_name="aieval-mcp",
    doc="""Play every task k times per model with the server's tools (sync wrapper of
:func:`run_tasks_async`, which lists every option).""",
)


def _tasks(tasks: Any) -> tuple[McpTask, ...]:
    if isinstance(tasks, str | Path):
        return load_tasks(tasks)
    listed = list(tasks)
    if listed and all(isinstance(t, McpTask) for t in listed):
        return tuple(listed)
    return load_tasks(listed)


def figures_of(model: str, run_id: str, samples: Sequence[SampleRecord], k: int) -> ModelFigures:
    """A model's figures from its run's stored samples (see :class:`ModelFigures`)."""
    counts: dict[str, list[int]] = {}
    tools: dict[str, list[int]] = {}
    errors = with_errors = recovered = injected = 0
    for sample in samples:
        if sample.verdict is not None and sample.verdict.invalid:
            continue
        tally = counts.setdefault(task_of(sample.example_id)[0], [0, 0])
        tally[0] += 1
        tally[1] += bool(sample.passed)
        errors += sample.error is not None
        injected += len((sample.extra.get(MCP_KEY) or {}).get("injected") or ())
        called = _calls(sample)
        for call in called:
            tally = tools.setdefault(call.name, [0, 0])
            tally[0] += 1
            tally[1] += call.error is not None
        if any(call.error is not None for call in called):
            with_errors += 1
            recovered += bool(sample.passed)
    eligible = [(n, c) for n, c in counts.values() if n >= k]
    return ModelFigures(
        model=model,
        run_id=run_id,
        tasks=len(counts),
        k=k,
        samples=sum(n for n, _ in counts.values()),
        errors=errors,
        pass_at_k=_interval([pass_at_k(n, c, k) for n, c in eligible]),
        pass_hat_k=_interval([pass_hat_k(n, c, k) for n, c in eligible]),
        with_tool_errors=with_errors,
        recovered=recovered,
        injected=injected,
        tools={name: (c, e) for name, (c, e) in sorted(tools.items())},
    )


def _calls(sample: SampleRecord) -> tuple[ToolUse, ...]:
    """The answer's tool calls, from its stored trajectory (none when it failed unscored)."""
    score = sample.scores.get(TOOL_USE)
    stored = None if score is None else (score.metadata or {}).get(TRAJECTORY_KEY)
    return () if stored is None else Trajectory.from_dict(stored).called


def _interval(values: list[float]) -> ConfidenceInterval | None:
    """The mean over tasks with a percentile bootstrap interval over tasks (seeded)."""
    if not values:
        return None
    if len(set(values)) == 1:
        return ConfidenceInterval(values[0], values[0], values[0])
    return bootstrap_ci(statistics.fmean, values, n_resamples=2000, seed=0)


@dataclass(frozen=True, slots=True)
class ServerVerdict:
    """Two versions of a server on the same tasks, models and seeds: per model the
    comparison's outcome (paired by task and epoch), and the verdict over all models: block
    when a model blocks, promote when every model promotes, else inconclusive."""

    outcome: str
    models: Mapping[str, str]
    reasons: Mapping[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "mcp_verdict",
            "outcome": self.outcome,
            "models": dict(self.models),
            "reasons": dict(self.reasons),
        }


def compare_servers(
    store: Store,
    baseline: TaskRuns | Mapping[str, str],
    candidate: TaskRuns | Mapping[str, str],
    *,
    policy: PromotionPolicy | None = None,
    seed: int | None = 0,
) -> ServerVerdict:
    """The paired verdict between two versions of a server (``baseline`` and ``candidate``:
    :func:`run_tasks` results, or ``{model: run id}``), through :func:`aieval.report.compare_runs`
    per model.

    Raises:
        ConfigError: the two do not hold the same models.
    """
    old = baseline.run_ids() if isinstance(baseline, TaskRuns) else dict(baseline)
    new = candidate.run_ids() if isinstance(candidate, TaskRuns) else dict(candidate)
    if set(old) != set(new):
        raise ConfigError(
            f"compare_servers: the runs hold other models (baseline: {sorted(old)}, candidate: "
            f"{sorted(new)}); run both versions with the same models"
        )
    outcomes: dict[str, str] = {}
    reasons: dict[str, str] = {}
    for model in sorted(old):
        comparison = compare_runs(store, old[model], new[model], policy=policy, seed=seed)
        outcomes[model] = comparison.outcome
        reasons[model] = comparison.decision.summary
    values = set(outcomes.values())
    outcome = (
        "block" if "block" in values else "promote" if values == {"promote"} else "inconclusive"
    )
    return ServerVerdict(outcome, outcomes, reasons)
