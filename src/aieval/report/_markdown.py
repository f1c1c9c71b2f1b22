"""The Markdown renderer: a report or comparison as a pull-request comment (GitHub-flavoured)."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from aieval._terminal import escape_markdown as escape
from aieval._terminal import printable_data
from aieval._usage_figures import format_cache, format_cost, format_tokens
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
    RATE_DEFAULT,
    as_document,
    baseline_choice,
    block_interval,
    coverage_text,
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

__all__ = ["render_markdown"]

# Longer lists fold into <details> so the comment's first screen stays the decision and metrics;
# folded lists stop at _MAX_ROWS so a comment stays well under GitHub's 65,536-character limit.
_FOLD_AFTER = 5
_MAX_ROWS = 50


def render_markdown(obj: Any) -> str:
    """Render a report or comparison as GitHub-flavoured Markdown for a pull-request comment.

    A comparison starts with its decision (✅ promote / ❌ blocked) and one line per rule;
    long lists fold into ``<details>``. Untrusted text (sample ids, reasons) is escaped.

    >>> print(render_markdown({"kind": "report", "run": {"name": "qa", "id": "r1"},
    ...     "samples": 0, "pass_rate": {"estimate": None, "low": None, "high": None,
    ...     "passed": 0, "n": 0}}).splitlines()[0])
    ### aieval report: qa · r1
    """
    doc = printable_data(as_document(obj))
    blocks = _comparison(doc) if doc["kind"] == "comparison" else _report(doc)
    return "\n\n".join(b for b in blocks if b) + "\n"


def table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, numeric: Collection[int] | None = None
) -> str:
    """A GFM table; columns in ``numeric`` (default: all but the first) are right-aligned."""
    right = set(range(1, len(headers))) if numeric is None else set(numeric)
    align = ["---:" if i in right else ":---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _folded(
    summary: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    numeric: Collection[int] | None = None,
    total: int | None = None,
) -> str:
    if len(rows) <= _FOLD_AFTER:
        return f"**{summary}**\n\n" + table(headers, rows, numeric=numeric)
    shown = rows[:_MAX_ROWS]
    total = len(rows) if total is None else total
    count = total if len(shown) == total else f"{len(shown)} of {total}"
    return (
        f"<details><summary>{summary} ({count})</summary>\n\n"
        + table(headers, shown, numeric=numeric)
        + "\n\n</details>"
    )


def _report(doc: Mapping[str, Any]) -> Iterator[str]:
    run = doc["run"]
    yield f"### aieval report: {escape(run_title(run))}"
    rate = doc["pass_rate"]
    facts = [
        f"**{doc['samples']}** samples",
        f"pass rate **{pct(rate['estimate'])}** {block_interval(rate, pct, RATE_DEFAULT)}"
        + (f" ({escape(coverage_text(doc))})" if coverage_text(doc) else ""),
    ]
    score = doc.get("weighted_score")
    if score:
        facts.append(
            f"weighted score **{num(score['mean'])}** {block_interval(score)}"
            + (f" {escape(score['coverage']['text'])}" if score.get("coverage") else "")
        )
    if doc.get("target_errors"):
        facts.append(f"{doc['target_errors']} target errors")
    if workflow_label(run):
        facts.append(f"workflow {escape(workflow_label(run))}")
    yield " · ".join(facts)
    if doc.get("grades"):
        yield table(
            GRADE_ORDER, [[str(doc["grades"].get(g, 0)) for g in GRADE_ORDER]], numeric=range(5)
        )
    yield from _minimums(doc.get("minimums"))
    yield from _epochs(doc.get("epochs"))
    yield from _code(doc.get("code"))
    yield from _tools(doc.get("tools"))
    yield from _conversations(doc.get("conversations"))
    yield from _judge_figures(doc.get("judge_figures"))
    yield from _report_tables(doc)
    yield _warnings(doc.get("warnings") or [])


def _report_tables(doc: Mapping[str, Any]) -> Iterator[str]:
    if doc.get("gates"):
        yield _folded(
            f"Gate failure rates ({methods_note(doc['gates'], RATE_DEFAULT)})",
            cells.GATE_HEAD,
            [cells.gate_row(g, escape) for g in doc["gates"]],
        )
    if doc.get("criteria"):
        yield _folded(
            f"Criteria (normalized 0..1; {escape(methods_note(doc['criteria']))})",
            cells.CRITERION_HEAD,
            [cells.criterion_row(c, escape) for c in doc["criteria"]],
            numeric=range(2, 10),
        )
    if doc.get("failure_reasons"):
        yield _folded(
            "Top failure reasons",
            ["kind", "key", "count", "reason", "examples"],
            [
                [
                    r["kind"],
                    escape(r["key"]),
                    str(r["count"]),
                    escape(r["reason"]),
                    ", ".join(escape(i) for i in r.get("sample_ids") or []),
                ]
                for r in doc["failure_reasons"]
            ],
            numeric=[2],
        )
    if doc.get("judges"):
        yield _folded(
            "Judges",
            cells.JUDGE_HEAD,
            [
                [
                    escape(name),
                    str(j["n"]),
                    pct(j["parse_failure_rate"]),
                    str(j.get("malformed", 0)),
                    " ".join((pct(j.get("inconsistency_rate")), escape(pairwise_note(j)))),
                    escape(j.get("warning") or ""),
                ]
                for name, j in doc["judges"].items()
            ],
            numeric=[1, 2, 3, 4],
        )
    yield _resources(doc)
    for field, rows in ((doc.get("groups") or {}).get("slices") or {}).items():
        yield _folded(
            f"By {escape(field)}",
            ["group", "samples", "pass rate", "weighted score"],
            [
                [
                    escape(r["key"]),
                    str(r["samples"]),
                    pct(r["pass_rate"]["estimate"]),
                    num(r.get("weighted_score_mean")),
                ]
                for r in rows
            ],
        )


def _minimums(minimums: Mapping[str, Any] | None) -> Iterator[str]:
    """The minimums the run was held to, each met or not."""
    if not minimums:
        return
    rows = [[escape(cell) for cell in row] for row in minimum_rows(minimums)]
    yield f"**Minimums{'' if minimums.get('met') else ' (missed)'}**"
    yield table(MINIMUM_HEAD, rows)


def _epochs(epochs: Mapping[str, Any] | None) -> Iterator[str]:
    """pass@k and pass^k by k, the variance split of judged scorers, the least reliable
    examples (folded)."""
    if not epochs:
        return
    yield f"**{escape(epochs_title(epochs))}**"
    yield table(K_HEAD, k_rows(epochs))
    yield f"*{ESTIMATORS}*"
    variance = [[escape(cell) for cell in row] for row in variance_rows(epochs)]
    if variance:
        yield "**Variance: answers vs judge**\n\n" + table(VARIANCE_HEAD, variance)
    rows = [[escape(cell) for cell in row] for row in example_rows(epochs)]
    yield _folded("Examples, least reliable first", example_head(epochs), rows)


def _code(code: Mapping[str, Any] | None) -> Iterator[str]:
    """A code evaluation: pass@k with its estimator, then each problem's c/n and statuses."""
    if not code:
        return
    yield f"**Code evaluation** · {escape(code_totals(code))}"
    yield table(PASS_AT_K_HEAD, pass_at_k_rows(code))
    yield f"*{ESTIMATOR}*"
    rows = [[escape(cell) for cell in row] for row in problem_rows(code)]
    yield _folded("Problems", PROBLEM_HEAD, rows, numeric=range(1, 7))
    yield _warnings(code.get("warnings") or [])


def _conversations(section: Mapping[str, Any] | None) -> Iterator[str]:
    """A run of conversations: how they ended, stop reasons, turns, failed and invalid ones."""
    if not section:
        return
    yield f"**Conversations** · {escape(conversations_totals(section))} · {turns_line(section)}"
    yield table(STOP_HEAD, stop_rows(section), numeric=range(1, 2))
    rows = [[escape(cell) for cell in row] for row in issue_rows(section)]
    if rows:
        yield _folded(issues_title(section), ISSUE_HEAD, rows, numeric=range(1, 3))


def _judge_figures(section: Mapping[str, Any] | None) -> Iterator[str]:
    """Per judge: agreement with its reviewers, status, raw vs corrected pass rate."""
    if not section:
        return
    yield f"**{JUDGE_FIGURES_TITLE}**"
    rows = judge_figure_rows(section)
    if rows:
        yield table(JUDGE_FIGURES_HEAD, [[escape(c) for c in row] for row in rows], numeric=())
    yield "\n".join(f"- {escape(line)}" for line in judge_notes(section))


def _resources(doc: Mapping[str, Any]) -> str:
    latency, tokens = doc.get("latency") or {}, doc.get("tokens") or {}
    counted = tokens.get("total") or tokens.get("unreported_calls")  # known, or unknown
    if latency.get("p50") is None and not counted and doc.get("cost") is None:
        return ""
    cache = format_cache(doc.get("cache"))
    return (
        f"Latency p50 {num(latency.get('p50'))} s · p95 {num(latency.get('p95'))} s · "
        f"{format_tokens(tokens)} · cost {format_cost(doc.get('cost'))}"
        + (f" · {cache}" if cache else "")
    )


def _warnings(warnings: Sequence[str]) -> str:
    return "\n".join(f"> ⚠️ {escape(w)}" for w in warnings)


_MARKS = {"promote": "✅", "pass": "✅", "block": "❌", "fail": "❌", "inconclusive": "❔"}


def _comparison(doc: Mapping[str, Any]) -> Iterator[str]:
    decision = doc["decision"]
    yield f"### {_MARKS[outcome_of(decision)]} {escape(decision['summary'])}"
    yield "\n".join(
        f"- {_MARKS[rule_outcome(r)]} `{r['rule']}`: {escape(r['reason'])}"
        for r in decision["rules"]
    )
    note = not_comparable(doc)
    if note:
        yield f"> ⚠️ **Not comparable:** {escape(note)}"
    yield (
        f"Candidate {escape(run_title(doc['candidate']))} vs baseline "
        f"{escape(run_title(doc['baseline']))} · {paired_counts(doc)}"
    )
    chosen = baseline_choice(doc)
    if chosen is not None:
        yield f"> {'⚠️ ' if chosen[1] else ''}{escape(chosen[0])}"
    yield from _judge_figures(doc.get("judge_figures"))
    yield table(METRIC_HEAD, [cells.metric_row(m, escape) for m in doc["metrics"]])
    for title, key in (("Regressions", "regressions"), ("Improvements", "improvements")):
        if doc[key]:
            yield _folded(
                title,
                cells.EXAMPLE_HEAD,
                [cells.example_row(r, escape, escape(r["id"])) for r in doc[key]],
                numeric=[3],
                total=cells.change_count(doc, key),
            )
    tie = shown_tie_break(doc)
    if tie is not None:
        yield f"Tie-break: {escape(tie)}"
    yield cells.changes_line(doc)
    yield from _side_epochs(doc.get("epochs"))
    yield from _compared_conversations(doc.get("conversations"))
    yield from _compared_tools(doc.get("tools"))
    yield provenance_details(doc)
    yield _warnings(decision.get("warnings") or [])


def _compared_conversations(section: Mapping[str, Any] | None) -> Iterator[str]:
    """Two runs of conversations: invalid ones left out, pass^k, the first regressed turns."""
    if not section:
        return
    yield f"**Conversations** · {escape(conv.summary_line(section))}"
    for title, head, rows, total in (
        ("First regressed turn", conv.REGRESSED_HEAD, conv.regressed_rows(section),
         section.get("regressed_total")),
        ("Invalid conversations (left out of the verdict)", conv.INVALID_HEAD,
         conv.invalid_rows(section), None),
        ("pass^k over the paired scenarios", conv.PASS_HAT_HEAD, conv.pass_hat_rows(section),
         None),
    ):  # fmt: skip
        if rows:
            cells_ = [[escape(c) for c in row] for row in rows]
            yield _folded(title, head, cells_, numeric=(), total=total)
    more = conv.more_line(section)
    if more:
        yield f"_{more}_"


def _side_epochs(epochs: Mapping[str, Any] | None) -> Iterator[str]:
    """Each side's pass^k, pass@k and variance split, for runs of epochs."""
    if not epochs:
        return
    yield "**Epochs:** pass^k (all k answers pass) and pass@k by side"
    yield table(COMPARE_K_HEAD, side_k_rows(epochs))
    rows = side_variance_rows(epochs)
    if rows:
        yield "**Variance: answers vs judge, by side**"
        yield table(
            COMPARE_VARIANCE_HEAD, [[escape(c) for c in r] for r in rows],
            numeric=range(2, len(COMPARE_VARIANCE_HEAD)),
        )  # fmt: skip


def provenance_details(doc: Mapping[str, Any]) -> str:
    """Both runs' provenance side by side, folded; differing facts marked."""
    rows = provenance_rows(doc)
    if not rows:
        return ""
    flagged = sum(1 for *_, flag in rows if flag)
    body = table(
        cells.PROVENANCE_HEAD,
        [
            [escape(c) if i < 3 else (f"**{c}**" if c else "") for i, c in enumerate(r)]
            for r in rows
        ],
        numeric=(),
    )
    return (
        f"<details><summary>Provenance ({flagged} of {len(rows)} differ)</summary>\n\n"
        f"{body}\n\n</details>"
    )


def _tools(section: Any) -> Iterator[str]:
    """Per-tool figures of each trajectory scorer: totals, per tool, the confusion matrix."""
    if not section:
        return
    for line, tables in tool_cells.run_tables(section):
        yield f"**Tools** · {escape(line)}"
        yield from tool_tables(tables)


def _compared_tools(section: Any) -> Iterator[str]:
    """Two runs' per-tool figures: each run's totals, then per tool the change."""
    if not section:
        return
    lines, tables = tool_cells.compared_tables(section)
    yield "\n\n".join(f"**Tools** · {escape(line)}" for line in lines)
    yield from tool_tables(tables)


def tool_tables(tables: Sequence[tool_cells.ToolTable]) -> Iterator[str]:
    """Each table folded when long, names escaped (they come from models and datasets)."""
    for spec in tables:
        head = [escape(h) for h in spec.head]
        rows = [[escape(c) for c in row] for row in spec.rows]
        yield _folded(escape(spec.title), head, rows, numeric=range(spec.left, len(head)))
        if spec.note:
            yield f"_{escape(spec.note)}_"
