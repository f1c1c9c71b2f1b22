"""The terminal renderer: Rich tables for a report or a comparison."""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from aieval._tables import fit
from aieval._terminal import printable_data
from aieval.errors import ConfigError
from aieval.report import _cells as cells
from aieval.report import _compare_conversations as conv
from aieval.report import _tool_cells as tool_cells
from aieval.report._code import (
    ESTIMATOR,
    PASS_AT_K_HEAD,
    PROBLEM_HEAD,
    code_totals,
    pass_at_k_rows,
    problem_rows,
)
from aieval.report._conversations import (
    ISSUE_HEAD,
    STOP_HEAD,
    conversations_totals,
    issue_rows,
    issues_title,
    stop_rows,
    turns_line,
)
from aieval.report._document import (
    GRADE_ORDER,
    METRIC_HEAD,
    PROVENANCE_FLAGS,
    RATE_DEFAULT,
    as_document,
    baseline_choice,
    block_interval,
    coverage_text,
    interval_kinds,
    methods_note,
    not_comparable,
    num,
    outcome_of,
    paired_counts,
    pairwise_note,
    pct,
    provenance_rows,
    rule_outcome,
    run_title,
    shown_tie_break,
    side_pass,
    workflow_label,
)
from aieval.report._epochs import (
    COMPARE_K_HEAD,
    COMPARE_VARIANCE_HEAD,
    ESTIMATORS,
    K_HEAD,
    MINIMUM_HEAD,
    VARIANCE_HEAD,
    epochs_title,
    example_head,
    example_rows,
    k_rows,
    minimum_rows,
    side_k_rows,
    side_variance_rows,
    variance_rows,
)
from aieval.report._judge_cells import (
    JUDGE_FIGURES_HEAD,
    JUDGE_FIGURES_TITLE,
    judge_figure_rows,
    judge_notes,
)

__all__ = ["render_diff", "render_judges", "render_text"]

# Examples listed per table in a terminal comparison; `aieval diff` lists the rest.
_SHOWN = 10


def render_text(obj: Any, *, width: int | None = None, console: Console | None = None) -> str:
    """Render a report or comparison as terminal text (Rich tables).

    Args:
        obj: a ``RunReport``, a ``Comparison``, or the ``to_dict()`` data of either.
        width: columns to lay the tables out in (default 120).
        console: also print there, with colours (the CLI passes its terminal console).

    Returns:
        The rendered text without colour codes.
    """
    doc = printable_data(as_document(obj))  # data never drives the terminal
    parts = list(_comparison(doc) if doc["kind"] == "comparison" else _report(doc))
    return _print(parts, width, console)


def render_judges(
    section: Mapping[str, Any], *, width: int | None = None, console: Console | None = None
) -> str:
    """Render only the Judges section (a report's ``judge_figures``), as ``aieval run`` prints
    it after a run's summary."""
    return _print(list(_judge_figures(printable_data(section))), width, console)


def render_diff(
    obj: Any,
    *,
    limit: int = 20,
    unchanged: Sequence[Mapping[str, Any]] | None = None,
    width: int | None = None,
    console: Console | None = None,
) -> str:
    """Render a comparison's per-example changes: regressions, improvements, unpaired ids.

    Args:
        obj: a ``Comparison`` or its ``to_dict()`` data.
        limit: at most this many rows per table.
        unchanged: rows shaped like a regression for the examples that did not change, to
            list them too (``aieval diff --all``).
        width: columns to lay the tables out in (default 120).
        console: also print there, with colours.
    """
    doc = printable_data(as_document(obj))
    if doc["kind"] != "comparison":
        raise ConfigError("render_diff needs a Comparison (or its dict), not a report")
    unchanged = printable_data(unchanged) if unchanged is not None else None
    parts: list[RenderableType] = [
        Text(
            f"baseline {doc['baseline']['id']} · candidate {doc['candidate']['id']} · "
            f"{paired_counts(doc)} · {cells.change_count(doc, 'regressions')} regressions · "
            f"{cells.change_count(doc, 'improvements')} improvements · {doc['unchanged']} unchanged"
        )
    ]
    groups = [
        ("regressions", doc["regressions"], cells.change_count(doc, "regressions")),
        ("improvements", doc["improvements"], cells.change_count(doc, "improvements")),
    ]
    if unchanged is not None:
        groups.append(("unchanged", list(unchanged), len(unchanged)))
    for title, rows, total in groups:
        if rows:
            parts.append(
                example_table(f"{title} ({min(limit, len(rows))} of {total})", rows[:limit])
            )
    for title, key in (
        ("only in baseline", "only_baseline"),
        ("only in candidate", "only_candidate"),
    ):
        if doc[f"{key}_count"]:
            ids = ", ".join(doc[key][:limit])
            parts.append(Text(f"{title} ({doc[f'{key}_count']}): {ids}"))
    return _print(parts, width, console)


def _print(parts: Sequence[RenderableType], width: int | None, console: Console | None) -> str:
    parts = [fit(p) if isinstance(p, Table) else p for p in parts]  # never cut, never too wide
    if console is not None:
        for part in parts:
            console.print(part)
    buffer = io.StringIO()
    plain = Console(file=buffer, width=width or 120, color_system=None, highlight=False)
    for part in parts:
        plain.print(part)
    return buffer.getvalue()


def _table(title: str, *columns: str, left: int = 1) -> Table:
    """A table whose first ``left`` columns are text and the rest right-aligned numbers."""
    table = Table(title=title, title_justify="left", title_style="bold")
    for i, column in enumerate(columns):
        # names stay whole (they are what a reader searches for); long text columns fold
        table.add_column(
            column, justify="left" if i < left else "right", overflow="fold", no_wrap=i == 0
        )
    return table


def _add(table: Table, *cells: str | Text) -> None:
    """Add a row whose plain strings are literal text: names and ids may contain ``[``, which
    Rich would otherwise read as markup."""
    table.add_row(*(Text(c) if isinstance(c, str) else c for c in cells))


def _report(doc: Mapping[str, Any]) -> Iterator[RenderableType]:
    yield from _header(doc)
    if doc.get("grades"):
        yield _grades(doc["grades"])
    if doc.get("gates"):
        yield _gates(doc["gates"])
    if doc.get("criteria"):
        yield _criteria(doc["criteria"])
    if doc.get("failure_reasons"):
        yield _reasons(doc["failure_reasons"])
    if doc.get("judges"):
        yield _judges(doc["judges"])
    yield from _judge_figures(doc.get("judge_figures"))
    yield _resources(doc)
    yield from _minimums(doc.get("minimums"))
    yield from _epochs(doc.get("epochs"))
    yield from _code(doc.get("code"))
    yield from _conversations(doc.get("conversations"))
    yield from _tools(doc.get("tools"))
    yield from _groups(doc.get("groups") or {})
    yield from _warnings(doc.get("warnings") or [])


#: Examples listed in the text report of a run of epochs (the least reliable first).
_EPOCH_EXAMPLES = 20


def _minimums(minimums: Mapping[str, Any] | None) -> Iterator[RenderableType]:
    """The minimums the run was held to, each met or not."""
    if not minimums:
        return
    table = _table("Minimums" + ("" if minimums.get("met") else " (MISSED)"), *MINIMUM_HEAD)
    for row in minimum_rows(minimums):
        _add(table, *row)
    yield table


def _epochs(epochs: Mapping[str, Any] | None) -> Iterator[RenderableType]:
    """pass@k and pass^k by k, the variance split of judged scorers, the least reliable
    examples."""
    if not epochs:
        return
    yield Text(epochs_title(epochs), style="bold")
    ks = _table("pass@k and pass^k", *K_HEAD)
    for row in k_rows(epochs):
        _add(ks, *row)
    yield ks
    yield Text(ESTIMATORS, style="dim")
    rows = variance_rows(epochs)
    if rows:
        variance = _table("Variance: answers vs judge", *VARIANCE_HEAD)
        for row in rows:
            _add(variance, *row)
        yield variance
    examples = example_rows(epochs)
    shown = examples[:_EPOCH_EXAMPLES]
    more = f" ({len(shown)} of {len(examples)})" if len(shown) < len(examples) else ""
    table = _table("Examples, least reliable first" + more, *example_head(epochs))
    for row in shown:
        _add(table, *row)
    yield table


def _code(code: Mapping[str, Any] | None) -> Iterator[RenderableType]:
    """A code evaluation: pass@k with its estimator, then each problem's c/n and statuses."""
    if not code:
        return
    yield Text.assemble(("Code evaluation", "bold"), " · ", code_totals(code))
    pass_at_k = _table("pass@k", *PASS_AT_K_HEAD)
    for row in pass_at_k_rows(code):
        _add(pass_at_k, *row)
    yield pass_at_k
    yield Text(ESTIMATOR, style="dim")
    problems = _table("Problems", *PROBLEM_HEAD[:-1], PROBLEM_HEAD[-1], left=1)
    for row in problem_rows(code):
        _add(problems, *row)
    yield problems
    yield from _warnings(code.get("warnings") or [])


def _conversations(section: Mapping[str, Any] | None) -> Iterator[RenderableType]:
    """A run of conversations: how they ended, stop reasons, turns, failed and invalid ones."""
    if not section:
        return
    yield Text.assemble(("Conversations", "bold"), " · ", conversations_totals(section))
    yield Text(turns_line(section))
    stops = _table("Stop reasons", *STOP_HEAD)
    for row in stop_rows(section):
        _add(stops, *row)
    yield stops
    rows = issue_rows(section)
    if rows:
        issues = _table(issues_title(section), *ISSUE_HEAD, left=len(ISSUE_HEAD))
        for row in rows:
            _add(issues, *row)
        yield issues


def _tools(section: Any) -> Iterator[RenderableType]:
    """Per-tool figures of each trajectory scorer: totals, per tool, the confusion matrix."""
    if not section:
        return
    for line, tables in tool_cells.run_tables(section):
        yield Text.assemble(("Tools", "bold"), " · ", line)
        yield from _tool_tables(tables)


def _compared_tools(section: Any) -> Iterator[RenderableType]:
    """Two runs' per-tool figures: each run's totals, then per tool the change."""
    if not section:
        return
    lines, tables = tool_cells.compared_tables(section)
    for line in lines:
        yield Text.assemble(("Tools", "bold"), " · ", line)
    yield from _tool_tables(tables)


def _tool_tables(tables: Sequence[tool_cells.ToolTable]) -> Iterator[RenderableType]:
    for spec in tables:
        table = _table(spec.title, *(spec.block_head or spec.head), left=spec.left)
        for row in spec.rows:
            _add(table, *row)
        yield table
        if spec.note:
            yield Text(spec.note, style="dim")


def _header(doc: Mapping[str, Any]) -> Iterator[RenderableType]:
    run = doc["run"]
    line = Text.assemble(("run ", "dim"), (run_title(run), "bold"), f" · {run.get('status')}")
    if workflow_label(run):
        line.append(f" · workflow {workflow_label(run)}")
    yield line
    rate = doc["pass_rate"]
    summary = Text(f"{doc['samples']} samples · pass rate ")
    summary.append(pct(rate["estimate"]), "bold")
    shown = block_interval(rate, pct, RATE_DEFAULT, counts=f"{rate['passed']}/{rate['n']}")
    summary.append(f" {shown}")
    if coverage_text(doc):  # right beside the rate, which counts none of their samples
        summary.append(f" ({coverage_text(doc)})", "yellow")
    score = doc.get("weighted_score")
    if score:
        summary.append(" · weighted score ")
        summary.append(num(score["mean"]), "bold")
        summary.append(f" {block_interval(score)} ± sd {num(score['std'])}")
        if score.get("coverage"):
            summary.append(f" {score['coverage']['text']}", "yellow")
    if doc.get("target_errors"):
        summary.append(f" · {doc['target_errors']} target errors", "red")
    yield summary


def _grades(grades: Mapping[str, int]) -> Table:
    table = _table("grades", *GRADE_ORDER, left=0)
    _add(table, *(str(grades.get(g, 0)) for g in GRADE_ORDER))
    return table


def _gates(gates: list[Mapping[str, Any]]) -> Table:
    table = _table(f"gate failure rates ({methods_note(gates, RATE_DEFAULT)})", *cells.GATE_HEAD)
    for gate in gates:
        name, failures, rate, ci = cells.gate_row(gate)
        _add(table, name, failures, Text(rate, style="red" if gate["failures"] else ""), ci)
    return table


def _criteria(criteria: list[Mapping[str, Any]]) -> Table:
    title = f"criteria (normalized 0..1; {methods_note(criteria)})"
    table = _table(title, *cells.CRITERION_HEAD, left=2)
    for c in criteria:
        _add(table, *cells.criterion_row(c))
    return table


def _reasons(reasons: list[Mapping[str, Any]]) -> Table:
    table = _table("top failure reasons", *cells.REASON_HEAD, left=3)
    table.columns[4].justify = "left"
    for r in reasons:
        _add(
            table,
            r["kind"],
            Text(r["key"]),
            Text(r["reason"]),
            str(r["count"]),
            Text(", ".join(r.get("sample_ids") or [])),
        )
    return table


def _judges(judges: Mapping[str, Mapping[str, Any]]) -> Table:
    table = _table("judges", *cells.JUDGE_HEAD)
    table.columns[-1].justify = "left"
    for name, j in judges.items():
        inconsistent = (
            "-"
            if j.get("inconsistency_rate") is None
            else (f"{j['inconsistent']} ({pct(j['inconsistency_rate'])}); {pairwise_note(j)}")
        )
        _add(
            table,
            name,
            str(j["n"]),
            f"{j['parse_failures']} ({pct(j['parse_failure_rate'])})",
            str(j.get("malformed", 0)),
            inconsistent,
            Text(j.get("warning") or "", style="yellow"),
        )
    return table


def _judge_figures(section: Mapping[str, Any] | None) -> Iterator[RenderableType]:
    """Per judge: agreement with its reviewers, status, raw vs corrected pass rate."""
    if not section:
        return
    rows = judge_figure_rows(section)
    if rows:
        table = _table(JUDGE_FIGURES_TITLE, *JUDGE_FIGURES_HEAD, left=2)
        for row in rows:
            _add(table, *row)
        yield table
    else:
        yield Text(JUDGE_FIGURES_TITLE, style="bold")
    for line in judge_notes(section):
        yield Text(line)


def _resources(doc: Mapping[str, Any]) -> Table:
    table = _table("latency, tokens, cost", *cells.RESOURCE_HEAD, left=0)
    _add(table, *cells.resource_row(doc))
    return table


def _groups(groups: Mapping[str, Any]) -> Iterator[RenderableType]:
    if len(groups.get("workflow") or []) > 1:
        yield _group_table("by workflow", groups["workflow"])
    for field, rows in (groups.get("slices") or {}).items():
        yield _group_table(f"by {field}", rows)
    if groups.get("agents"):
        table = _table("agents", *cells.AGENT_HEAD)
        for a in groups["agents"]:
            _add(table, *cells.agent_row(a))
        yield table


def _group_table(title: str, rows: list[Mapping[str, Any]]) -> Table:
    table = _table(f"{title} ({methods_note(rows, RATE_DEFAULT)})", *cells.GROUP_HEAD)
    for row in rows:
        _add(table, *cells.group_row(row))
    return table


def _warnings(warnings: list[str]) -> Iterator[RenderableType]:
    for warning in warnings:
        yield Text.assemble(("warning: ", "yellow"), warning)


_VERDICT = {"promote": ("✔", "green"), "block": ("✘", "red"), "inconclusive": ("?", "yellow")}
_RULE = {
    "pass": ("pass", "green"),
    "fail": ("FAIL", "red"),
    "inconclusive": ("INCONCLUSIVE", "yellow"),
}


def _comparison(doc: Mapping[str, Any]) -> Iterator[RenderableType]:
    decision = doc["decision"]
    mark, style = _VERDICT[outcome_of(decision)]
    yield Text.assemble((f"{mark} ", f"bold {style}"), decision["summary"])
    yield Text.assemble(("baseline  ", "dim"), run_title(doc["baseline"]))
    yield Text.assemble(("candidate ", "dim"), run_title(doc["candidate"]))
    chosen = baseline_choice(doc)
    if chosen is not None:
        yield Text(chosen[0], style="bold yellow" if chosen[1] else "dim")
    note = not_comparable(doc)
    if note:
        yield Text.assemble(("not comparable: ", "bold red"), note)
    rules = _table("promotion rules", "rule", "result", "reason", left=3)
    for rule in decision["rules"]:
        _add(
            rules,
            rule["rule"],
            Text(*_RULE[rule_outcome(rule)]),
            Text(rule["reason"]),
        )
    yield rules
    yield from _judge_figures(doc.get("judge_figures"))
    yield _metrics(doc)
    yield from _side_epochs(doc.get("epochs"))
    yield from _compared_conversations(doc.get("conversations"))
    yield from _compared_tools(doc.get("tools"))
    yield from _provenance(doc)
    tie = shown_tie_break(doc)
    if tie is not None:
        yield Text(f"tie-break: {tie}")
    yield Text(f"{paired_counts(doc)} · {cells.changes_line(doc)}")
    for title, rows in (("regressions", doc["regressions"]), ("improvements", doc["improvements"])):
        if rows:
            shown = f"{title} ({min(_SHOWN, len(rows))} of {cells.change_count(doc, title)})"
            yield example_table(shown, rows[:_SHOWN])
    most = max(cells.change_count(doc, "regressions"), cells.change_count(doc, "improvements"))
    if most > _SHOWN:
        ids = f"{doc['baseline']['id']} {doc['candidate']['id']}"
        yield Text(f"every changed example: aieval diff {ids} --limit {most}", style="dim")
    yield from _warnings(decision.get("warnings") or [])


def _side_epochs(epochs: Mapping[str, Any] | None) -> Iterator[RenderableType]:
    """Each side's pass^k and pass@k by k, and each side's variance split, for runs of
    epochs."""
    if not epochs:
        return
    ks = _table("epochs: pass^k (all k answers pass) and pass@k by side", *COMPARE_K_HEAD)
    for row in side_k_rows(epochs):
        _add(ks, *row)
    yield ks
    rows = side_variance_rows(epochs)
    if rows:
        variance = _table("variance: answers vs judge, by side", *COMPARE_VARIANCE_HEAD, left=2)
        for row in rows:
            _add(variance, *row)
        yield variance


def _compared_conversations(section: Mapping[str, Any] | None) -> Iterator[RenderableType]:
    """Two runs of conversations: invalid ones left out, pass^k, the first regressed turns."""
    if not section:
        return
    yield Text.assemble(("Conversations", "bold"), " · ", conv.summary_line(section))
    for title, head, rows in (
        (conv.regressed_title(section), conv.REGRESSED_HEAD, conv.regressed_rows(section)),
        ("Invalid conversations (left out of the verdict)", conv.INVALID_HEAD,
         conv.invalid_rows(section)),
        ("pass^k over the paired scenarios", conv.PASS_HAT_HEAD, conv.pass_hat_rows(section)),
    ):  # fmt: skip
        if rows:
            table = _table(title, *head, left=len(head))
            for row in rows:
                _add(table, *row)
            yield table
    more = conv.more_line(section)
    if more:
        yield Text(more, style="dim")


def _provenance(doc: Mapping[str, Any]) -> Iterator[RenderableType]:
    rows = provenance_rows(doc)
    if not rows:
        return
    table = _table("provenance", *cells.PROVENANCE_HEAD, left=4)
    for label, base, cand, flag in rows:
        _add(
            table, label, base, cand, Text(flag, style="bold red" if flag == _BREAKS else "yellow")
        )
    yield table


_BREAKS = PROVENANCE_FLAGS["breaks"]


def _metrics(doc: Mapping[str, Any]) -> Table:
    table = _table("metrics (candidate − baseline)", *METRIC_HEAD)
    for m in doc["metrics"]:
        delta = m.get("delta")
        # a higher gate failure rate is worse, everything else is better when higher
        worse = delta is not None and (delta > 0 if m["name"].startswith("gate:") else delta < 0)
        style = "" if not delta else ("red" if worse else "green")
        name, base, cand, shown, ci, method, n = cells.metric_row(m, short=True)
        _add(table, name, base, cand, Text(shown, style=style), ci, method, n)
    kinds = interval_kinds(doc["metrics"])
    if kinds:
        table.caption = kinds
        table.caption_justify = "left"
    return table


def example_table(title: str, rows: Sequence[Mapping[str, Any]]) -> Table:
    """Per-example changes: id, baseline and candidate verdicts, score delta, what changed."""
    table = _table(title, *cells.EXAMPLE_HEAD, left=1)
    table.columns[-1].justify = "left"
    for row in rows:
        _add(
            table,
            Text(str(row["id"])),
            _side(row["baseline"], row["candidate"]),
            _side(row["candidate"], row["baseline"]),
            Text(num(row.get("delta"), 1) if row.get("delta") is None else f"{row['delta']:+.1f}"),
            Text("; ".join(row.get("changes") or [])),
        )
    return table


def _side(side: Mapping[str, Any], other: Mapping[str, Any]) -> Text:
    verdict = Text(side_pass(side, other), style="green" if side.get("passed") else "red")
    if side.get("grade"):
        verdict.append(f" {side['grade']}")
    if side.get("weighted_score") is not None:
        verdict.append(f" {side['weighted_score']:.1f}")
    return verdict
