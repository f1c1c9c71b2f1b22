"""Per-problem c/n, pass@k with intervals and per-status counts of a code-evaluation run."""

from __future__ import annotations

import html
import json
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, get_args

from aieval._records import SampleRecord
from aieval._terminal import escape_markdown, printable
from aieval.sandbox import ExecutionStatus
from aieval.stats import bootstrap_ci, pass_at_k

__all__ = ["CodeEvalSummary", "ProblemResult", "summarize_samples"]

STATUSES: tuple[str, ...] = get_args(ExecutionStatus)


@dataclass(slots=True)
class ProblemResult:
    """One problem's executions.

    Attributes:
        task_id: the problem.
        n: completions with a verdict, pass@k's n (generation failures count, as ``error``;
            ``sandbox_error`` samples do not: the candidate never ran).
        c: completions that passed.
        statuses: ``{status: count}`` over the sandbox statuses, ``sandbox_error`` included.
        samples: per completion: ``id``, ``status``, ``detail``, ``duration_s``.
    """

    task_id: str
    n: int = 0
    c: int = 0
    statuses: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    samples: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class CodeEvalSummary:
    """What a code evaluation measured.

    Attributes:
        run_id: the stored run the numbers come from.
        problems: per-problem results, in task order.
        pass_at_k: ``{k: {"value", "low", "high", "problems"}}``: the mean of the unbiased
            per-problem estimator over problems with at least ``k`` executions, with a 95%
            bootstrap interval over problems.
        statuses: ``{status: count}`` over every execution.
        executions: samples counted, ``sandbox_error`` ones included.
        warnings: executions the sandbox failed (errors of the run, left out of pass@k),
            isolation that was weaker than the default (no process cap, no scratch bound,
            isolation turned off), problems with fewer executions than some ``k``.
    """

    run_id: str
    problems: list[ProblemResult]
    pass_at_k: dict[int, dict[str, float | int | None]]
    statuses: dict[str, int]
    executions: int
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: the report bundle's ``code`` section."""
        data = asdict(self)
        data["pass_at_k"] = {str(k): v for k, v in self.pass_at_k.items()}
        return data

    def render(self, fmt: str = "text") -> str:
        """The summary as ``text``, ``markdown``, ``html`` or ``json``.

        Task ids and failure details come from problem files and executed code: every format
        but JSON shows their control characters as escapes (:func:`aieval._terminal.printable`),
        and Markdown and HTML escape their markup too, so a summary never drives a terminal or
        opens a tag. JSON keeps the data as it is, encoded.
        """
        if fmt == "json":
            return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"
        if fmt not in ("text", "markdown", "html"):
            raise ValueError(f"unknown format {fmt!r}: text, markdown, html or json")
        rows = [
            [p.task_id, f"{p.c}/{p.n}", *(str(p.statuses[s]) for s in STATUSES), _first_fail(p)]
            for p in self.problems
        ]
        head = ["problem", "c/n", *STATUSES, "first failure"]
        ks = [
            [
                f"pass@{k}",
                _fmt(v["value"]),
                f"[{_fmt(v['low'])}, {_fmt(v['high'])}]",
                str(v["problems"]),
            ]
            for k, v in sorted(self.pass_at_k.items())
        ]
        khead = ["metric", "value", "95% interval", "problems"]
        counts = ", ".join(f"{s} {self.statuses[s]}" for s in STATUSES)
        title = f"Code evaluation {self.run_id}: {self.executions} executions ({counts})"
        lines = [title, *(f"warning: {w}" for w in self.warnings)]
        clean = [[printable(cell) for cell in row] for row in rows]
        if fmt == "markdown":
            heading = "\n".join(["## " + escape_markdown(printable(title))] + [
                f"> {escape_markdown(printable(line))}" for line in lines[1:]
            ])  # fmt: skip
            cells = [[escape_markdown(cell) for cell in row] for row in clean]
            return "\n\n".join([heading, _md(khead, ks), _md(head, cells)]) + "\n"
        if fmt == "html":
            heading = "<br>".join(html.escape(printable(line)) for line in lines)
            body = f"<h2>{heading}</h2>{_html(khead, ks)}{_html(head, clean)}"
            return f"<!doctype html><meta charset='utf-8'><title>code eval</title>{body}\n"
        text = "\n".join(printable(line) for line in lines)
        return "\n\n".join([text, _plain(khead, ks), _plain(head, clean)]) + "\n"


def summarize_samples(
    run_id: str, samples: Iterable[SampleRecord], ks: Sequence[int], *, seed: int = 0
) -> CodeEvalSummary:
    """Group a code-evaluation run's samples by problem and compute pass@k for each ``k``."""
    problems: dict[str, ProblemResult] = {}
    isolation: set[str] = set()
    for sample in samples:
        score = sample.scores.get("code_passes")
        meta = score.metadata if score is not None else {}
        task = str(sample.metadata.get("task_id", meta.get("task_id", sample.id)))
        isolation.add(str(meta.get("isolation", "")))
        status = str(meta.get("status", "error"))
        if status not in STATUSES:
            status = "error"
        detail = (score.reason if score is not None else None) or (
            (score.error if score is not None else None) or sample.error or ""
        )
        if score is not None and score.error is not None:
            # The scorer gave no verdict (the sandbox failed before the candidate ran).
            status, detail = "sandbox_error", score.error.removeprefix("sandbox_error: ")
        problem = problems.setdefault(task, ProblemResult(task))
        problem.n += status != "sandbox_error"
        problem.c += status == "passed"
        problem.statuses[status] += 1
        problem.samples.append(
            {
                "id": sample.id,
                "status": status,
                "detail": detail,
                "duration_s": meta.get("duration_s"),
            }
        )
    totals = Counter[str]()
    for problem in problems.values():
        totals.update(problem.statuses)
    weak = ("not capped", "unbounded", "none:")
    warnings = _sandbox_warnings(problems.values(), sum(totals.values()))
    warnings += [
        f"weaker isolation: {text}" for text in sorted(isolation) if any(w in text for w in weak)
    ]
    short = {k: sum(p.n < k for p in problems.values()) for k in ks}
    warnings += [
        f"pass@{k} leaves out {m} problem(s) with fewer than {k} executions with a verdict"
        for k, m in short.items()
        if m
    ]
    return CodeEvalSummary(
        run_id=run_id,
        problems=list(problems.values()),
        pass_at_k={k: _pass_at(list(problems.values()), k, seed) for k in ks},
        statuses={s: totals[s] for s in STATUSES},
        executions=sum(totals.values()),
        warnings=warnings,
    )


def _sandbox_warnings(problems: Iterable[ProblemResult], executions: int) -> list[str]:
    failed = [s for p in problems for s in p.samples if s["status"] == "sandbox_error"]
    if not failed:
        return []
    return [
        f"{len(failed)} of {executions} executions have no verdict, the sandbox failed (first, "
        f"{failed[0]['id']}: {str(failed[0]['detail'])[:300]}); they are errors of the run, "
        "left out of pass@k"
    ]


def _pass_at(problems: list[ProblemResult], k: int, seed: int) -> dict[str, float | int | None]:
    values = [pass_at_k(p.n, p.c, k) for p in problems if p.n >= k]
    if not values:
        return {"value": None, "low": None, "high": None, "problems": 0}
    if len(values) == 1:
        return {"value": values[0], "low": values[0], "high": values[0], "problems": 1}
    interval = bootstrap_ci(statistics.fmean, values, seed=seed)
    return {
        "value": statistics.fmean(values),
        "low": interval.low,
        "high": interval.high,
        "problems": len(values),
    }


def _first_fail(problem: ProblemResult) -> str:
    for sample in problem.samples:
        if sample["status"] != "passed":
            return f"{sample['status']}: {str(sample['detail'])[:80]}"
    return ""


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{float(value):.4f}"


def _plain(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in [head, *rows]
    ]
    return "\n".join(line.rstrip() for line in lines)


def _md(head: list[str], rows: list[list[str]]) -> str:
    """A Markdown table of cells already escaped (see ``render``)."""

    def cells(row: list[str]) -> str:
        return "| " + " | ".join(row) + " |"

    return "\n".join([cells(head), "|" + "---|" * len(head), *(cells(r) for r in rows)])


def _html(head: list[str], rows: list[list[str]]) -> str:
    def cells(row: list[str], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(str(c))}</{tag}>" for c in row) + "</tr>"

    return f"<table>{cells(head, 'th')}{''.join(cells(r, 'td') for r in rows)}</table>"


def code_report(store: Any, run: str, *, k: Sequence[int] | None = None) -> CodeEvalSummary:
    """The summary of a stored code evaluation (a run id, id prefix or name), e.g. for reports.

    Args:
        store: a :class:`~aieval.store.Store` or the path of its SQLite file.
        run: which run.
        k: the pass@k values; default: those the run was started with.

    Raises:
        RunNotFoundError: no run matches.
        ConfigError: the run is not a code evaluation.
    """
    from aieval.errors import ConfigError
    from aieval.store import RunRow, Store

    opened = store if isinstance(store, Store) else Store(store)
    row = run if isinstance(run, RunRow) else opened.get_run(run)
    meta = row.config.get("metadata") or {}
    if not isinstance(meta, dict) or meta.get("task") != "code":
        raise ConfigError(f"run {row.id} ({row.name}) is not a code evaluation")
    ks = list(k) if k else [int(v) for v in meta.get("k") or [1]]
    return summarize_samples(row.id, opened.iter_samples(row.id), ks)
