"""The HTML renderer: one self-contained page (inline CSS and SVG, nothing fetched, no scripts)."""

from __future__ import annotations

import html
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from aieval._terminal import printable_data
from aieval._usage_figures import format_cost
from aieval.report import _cells as cells
from aieval.report import _compare_conversations as conv
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
    METRIC_HEAD,
    RATE_DEFAULT,
    as_document,
    baseline_choice,
    block_interval,
    coverage_text,
    interval,
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
from aieval.report._epochs import ESTIMATORS as EPOCH_ESTIMATORS
from aieval.report._judge_cells import (
    JUDGE_FIGURES_HEAD,
    JUDGE_FIGURES_TITLE,
    judge_figure_rows,
    judge_notes,
)
from aieval.report._svg import forest_plot, gate_plot, grade_plot, histogram_grid
from aieval.report._tool_cells import ToolTable, compared_tables, run_tables

__all__ = ["render_html"]

# The page needs nothing from anywhere: the policy forbids every fetch and every script.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_CSS = """
:root{color-scheme:light}
body{margin:0;background:#fff;color:#1f2328;font:15px/1.5 system-ui,-apple-system,'Segoe UI',
sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px;border-bottom:1px solid
#d1d9e0;padding-bottom:4px}
.meta{color:#59636e;margin:0 0 16px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{border:1px solid #d1d9e0;border-radius:8px;padding:10px 16px;min-width:150px}
.card b{display:block;font-size:22px}.card span{color:#59636e;font-size:13px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:14px}
th,td{border-bottom:1px solid #d1d9e0;padding:5px 10px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#1a7f37;font-weight:600}.fail{color:#cf222e;font-weight:600}
.verdict{border-radius:8px;padding:12px 16px;margin:12px 0;font-size:18px}
.verdict.promote{background:#dafbe1;border:1px solid #1a7f37}
.verdict.block{background:#ffebe9;border:1px solid #cf222e}
.verdict.inconclusive{background:#fff8c5;border:1px solid #9a6700}
.inc{color:#9a6700;font-weight:600}
.warn{background:#fff8c5;border:1px solid #9a6700;border-radius:6px;padding:6px 10px;margin:4px 0}
.plots{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}
figure{margin:0}figcaption{color:#59636e;font-size:13px}
code{font-size:13px;background:#f6f8fa;padding:1px 4px;border-radius:4px;word-break:break-all}
code.rule{word-break:normal;white-space:nowrap}
"""


def render_html(obj: Any) -> str:
    """Render a report or comparison as one self-contained HTML page with inline SVG plots.

    The page loads nothing (its Content-Security-Policy forbids it) and escapes every name,
    id and reason, since those come from datasets and model output (control characters are
    shown as escapes, as in the other formats).
    """
    doc = printable_data(as_document(obj))
    if doc["kind"] == "comparison":
        title = f"aieval comparison: {run_title(doc['candidate'])} vs {run_title(doc['baseline'])}"
        body = "".join(_comparison(doc))
    else:
        title = f"aieval report: {run_title(doc['run'])}"
        body = "".join(_report(doc))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>"
        f"<body><main>{body}</main></body></html>\n"
    )


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, numeric: Collection[int] | None = None
) -> str:
    """A table with header cells; ``rows`` hold already-escaped cell HTML.

    Columns in ``numeric`` (default: all but the first) are right-aligned figures.
    """
    right = set(range(1, len(headers))) if numeric is None else set(numeric)
    head = "".join(f'<th scope="col">{_e(h)}</th>' for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{c}</td>' if i in right else f"<td>{c}</td>" for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _card(value: str, label: str) -> str:
    return f'<div class="card"><b>{_e(value)}</b><span>{_e(label)}</span></div>'


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


def _warnings(warnings: Sequence[str]) -> str:
    return "".join(f'<p class="warn">⚠ {_e(w)}</p>' for w in warnings)


def _report(doc: Mapping[str, Any]) -> Iterator[str]:
    run = doc["run"]
    yield f"<h1>{_e(run.get('name') or '-')}</h1>"
    meta = [m for m in (run.get("model"), f"run {run.get('id')}", run.get("status")) if m]
    if workflow_label(run):
        meta.append(f"workflow {workflow_label(run)}")
    if run.get("dataset"):
        meta.append(f"dataset {run['dataset']}")
    yield f'<p class="meta">{_e(" · ".join(meta))}</p>'
    yield _report_cards(doc)
    yield _warnings(doc.get("warnings") or [])
    yield from _minimums(doc.get("minimums"))
    yield from _epochs(doc.get("epochs"))
    yield from _code(doc.get("code"))
    yield from _conversations(doc.get("conversations"))
    yield from _tools(doc.get("tools"))
    plots = []
    if doc.get("grades"):
        plots.append(_figure(grade_plot(doc["grades"]), "Samples per grade."))
    if doc.get("gates"):
        plots.append(
            _figure(
                gate_plot(doc["gates"]), "Failure rate per gate; whiskers are Wilson 95% intervals."
            )
        )
    if plots:
        yield "<h2>Grades and gates</h2><div class=plots>" + "".join(plots) + "</div>"
    if doc.get("gates"):
        yield _table(cells.GATE_HEAD, [cells.gate_row(g, _e) for g in doc["gates"]])
        yield f'<p class="meta">{_e(methods_note(doc["gates"], RATE_DEFAULT))}</p>'
    yield from _criteria(doc.get("criteria") or [])
    yield from _reasons(doc.get("failure_reasons") or [])
    yield from _judges(doc.get("judges") or {})
    yield from _judge_figures(doc.get("judge_figures"))
    yield _resources(doc)
    yield from _groups(doc.get("groups") or {})


def _report_cards(doc: Mapping[str, Any]) -> str:
    rate, score = doc["pass_rate"], doc.get("weighted_score")
    cards = [
        _card(str(doc["samples"]), "samples"),
        _card(
            pct(rate["estimate"]),
            f"pass rate {block_interval(rate, pct, RATE_DEFAULT)}"
            + (f" ({coverage_text(doc)})" if coverage_text(doc) else ""),
        ),
    ]
    if score:
        cards.append(
            _card(
                num(score["mean"]),
                f"weighted score {block_interval(score)}"
                + (f" {score['coverage']['text']}" if score.get("coverage") else ""),
            )
        )
    if doc.get("target_errors"):
        cards.append(_card(str(doc["target_errors"]), "target errors"))
    if doc.get("cost") is not None:
        cards.append(_card(format_cost(doc["cost"]), "cost"))
    return '<div class="cards">' + "".join(cards) + "</div>"


#: Examples listed in the HTML report of a run of epochs (the least reliable first).
_EPOCH_EXAMPLES = 200


def _minimums(minimums: Mapping[str, Any] | None) -> Iterator[str]:
    """The minimums the run was held to, each met or not."""
    if not minimums:
        return
    yield f"<h2>Minimums{'' if minimums.get('met') else ' (missed)'}</h2>"
    yield _table(MINIMUM_HEAD, [[_e(c) for c in row] for row in minimum_rows(minimums)])


def _epochs(epochs: Mapping[str, Any] | None) -> Iterator[str]:
    """pass@k and pass^k by k, the variance split, the least reliable examples."""
    if not epochs:
        return
    yield f"<h2>{_e(epochs_title(epochs))}</h2>"
    yield _table(K_HEAD, [[_e(c) for c in row] for row in k_rows(epochs)])
    yield f'<p class="meta">{_e(EPOCH_ESTIMATORS)}</p>'
    variance = variance_rows(epochs)
    if variance:
        yield "<h3>Variance: answers vs judge</h3>"
        yield _table(VARIANCE_HEAD, [[_e(c) for c in row] for row in variance])
    rows = example_rows(epochs)
    shown = rows[:_EPOCH_EXAMPLES]
    more = f" ({len(shown)} of {len(rows)})" if len(shown) < len(rows) else ""
    yield f"<h3>Examples, least reliable first{_e(more)}</h3>"
    yield _table(
        example_head(epochs),
        [[f"<code>{_e(row[0])}</code>", *(_e(c) for c in row[1:])] for row in shown],
    )


def _code(code: Mapping[str, Any] | None) -> Iterator[str]:
    """A code evaluation: pass@k with its estimator, then each problem's c/n and statuses."""
    if not code:
        return
    yield f"<h2>Code evaluation</h2><p>{_e(code_totals(code))}</p>"
    yield _warnings(code.get("warnings") or [])
    yield _table(PASS_AT_K_HEAD, [[_e(c) for c in row] for row in pass_at_k_rows(code)])
    yield f'<p class="meta">{_e(ESTIMATOR)}</p>'
    yield _table(
        PROBLEM_HEAD,
        [[f"<code>{_e(row[0])}</code>", *(_e(c) for c in row[1:])] for row in problem_rows(code)],
        numeric=range(1, 7),
    )


def _conversations(section: Mapping[str, Any] | None) -> Iterator[str]:
    """A run of conversations: how they ended, stop reasons, turns, failed and invalid ones."""
    if not section:
        return
    yield (
        f"<h2>Conversations</h2><p>{_e(conversations_totals(section))}</p>"
        f'<p class="meta">{_e(turns_line(section))}</p>'
    )
    yield _table(STOP_HEAD, [[_e(c) for c in row] for row in stop_rows(section)], numeric=[1])
    rows = issue_rows(section)
    if rows:
        yield f"<h3>{_e(issues_title(section))}</h3>"
        yield _table(
            ISSUE_HEAD,
            [[f"<code>{_e(row[0])}</code>", *(_e(c) for c in row[1:])] for row in rows],
            numeric=range(1, 3),
        )


def _tools(section: Any) -> Iterator[str]:
    """Per-tool figures of each trajectory scorer: totals, per tool, the confusion matrix."""
    if not section:
        return
    yield "<h2>Tools</h2>"
    for line, tables in run_tables(section):
        yield f"<p>{_e(line)}</p>"
        yield from _tool_tables(tables)


def _compared_tools(section: Any) -> Iterator[str]:
    """Two runs' per-tool figures: each run's totals, then per tool the change."""
    if not section:
        return
    lines, tables = compared_tables(section)
    yield "<h2>Tools</h2>" + "".join(f"<p>{_e(line)}</p>" for line in lines)
    yield from _tool_tables(tables)
    # each run's own tables (per tool, confusion matrix), folded
    for side in ("baseline", "candidate"):
        for line, own in run_tables(section.get(side)):
            yield f"<details><summary>{_e(side)} · {_e(line)}</summary>"
            yield from _tool_tables(own)
            yield "</details>"


def _tool_tables(tables: Sequence[ToolTable]) -> Iterator[str]:
    # every cell escaped: tool names come from models and datasets
    for spec in tables:
        yield f"<h3>{_e(spec.title)}</h3>"
        yield _table(
            spec.head,
            [[_e(c) for c in row] for row in spec.rows],
            numeric=range(spec.left, len(spec.head)),
        )
        if spec.note:
            yield f'<p class="meta">{_e(spec.note)}</p>'


def _criteria(criteria: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    if not criteria:
        return
    yield "<h2>Criteria</h2>"
    yield _figure(
        histogram_grid(criteria),
        "Distribution of normalized values (0..1); the dashed red line is the floor.",
    )
    yield _table(
        [
            "name",
            "kind",
            "n",
            "mean",
            "95% CI",
            "sd",
            "p10",
            "p50",
            "p90",
            "floor",
            "below floor",
            "errors",
            "n/a",
        ],
        [
            [
                _e(c["name"]),
                _e(c["kind"]),
                str(c["n"]),
                num(c["mean"], 3),
                interval(c["low"], c["high"], lambda v: num(v, 3)),
                num(c["std"], 3),
                *(num((c.get("quantiles") or {}).get(k)) for k in ("p10", "p50", "p90")),
                num(c.get("floor")),
                str(c.get("floor_violations", 0)),
                str(c.get("errors", 0)),
                str(c.get("not_applicable", 0)),
            ]
            for c in criteria
        ],
        numeric=range(2, 13),
    )
    yield f'<p class="meta">{_e(methods_note(criteria))}</p>'


def _reasons(reasons: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    if not reasons:
        return
    yield "<h2>Top failure reasons</h2>"
    yield _table(
        cells.REASON_HEAD,
        [
            [
                _e(r["kind"]),
                _e(r["key"]),
                _e(r["reason"]),
                str(r["count"]),
                " ".join(f"<code>{_e(i)}</code>" for i in r.get("sample_ids") or []),
            ]
            for r in reasons
        ],
        numeric=[3],
    )


def _judges(judges: Mapping[str, Mapping[str, Any]]) -> Iterator[str]:
    if not judges:
        return
    yield "<h2>Judges</h2>"
    yield _table(
        cells.JUDGE_HEAD,
        [
            [
                _e(name),
                str(j["n"]),
                f"{j['parse_failures']} ({pct(j['parse_failure_rate'])})",
                str(j.get("malformed", 0)),
                " ".join((pct(j.get("inconsistency_rate")), _e(pairwise_note(j)))),
                _e(j.get("warning") or ""),
            ]
            for name, j in judges.items()
        ],
        numeric=[1, 2, 3, 4],
    )


def _judge_figures(section: Mapping[str, Any] | None) -> Iterator[str]:
    """Per judge: agreement with its reviewers, status, raw vs corrected pass rate."""
    if not section:
        return
    yield f"<h2>{_e(JUDGE_FIGURES_TITLE)}</h2>"
    rows = judge_figure_rows(section)
    if rows:
        yield _table(JUDGE_FIGURES_HEAD, [[_e(c) for c in row] for row in rows], numeric=(2, 3))
    yield "<ul>" + "".join(f"<li>{_e(line)}</li>" for line in judge_notes(section)) + "</ul>"


def _resources(doc: Mapping[str, Any]) -> str:
    return "<h2>Latency, tokens, cost</h2>" + _table(
        cells.RESOURCE_HEAD, [cells.resource_row(doc, _e, gap=" ")], numeric=[0, 1, 2, 3, 6]
    )


def _groups(groups: Mapping[str, Any]) -> Iterator[str]:
    sections = [("workflow", groups.get("workflow") or [])]
    sections += list((groups.get("slices") or {}).items())
    for field, rows in sections:
        if not rows:
            continue
        yield f"<h2>By {_e(field)}</h2>"
        yield _table(cells.GROUP_HEAD, [cells.group_row(r, _e) for r in rows], numeric=[1, 2, 3, 4])
        yield f'<p class="meta">{_e(methods_note(rows, RATE_DEFAULT))}</p>'
    if groups.get("agents"):
        yield "<h2>Agents</h2>"
        yield _table(
            cells.AGENT_HEAD,
            [cells.agent_row(a, _e, gap=" ") for a in groups["agents"]],
        )


_RULE_CELLS = {
    "pass": '<span class="pass">pass</span>',
    "fail": '<span class="fail">FAIL</span>',
    "inconclusive": '<span class="inc">INCONCLUSIVE</span>',
}


def _side_epochs(epochs: Mapping[str, Any] | None) -> Iterator[str]:
    """Each side's pass^k, pass@k and variance split, for runs of epochs."""
    if not epochs:
        return
    yield "<h2>Epochs: pass^k (all k answers pass) and pass@k by side</h2>"
    yield _table(COMPARE_K_HEAD, side_k_rows(epochs))
    rows = side_variance_rows(epochs)
    if rows:
        yield "<h2>Variance: answers vs judge, by side</h2>"
        yield _table(
            COMPARE_VARIANCE_HEAD, [[_e(c) for c in r] for r in rows],
            numeric=range(2, len(COMPARE_VARIANCE_HEAD)),
        )  # fmt: skip


def _compared_conversations(section: Mapping[str, Any] | None) -> Iterator[str]:
    """Two runs of conversations: invalid ones left out, pass^k, the first regressed turns."""
    if not section:
        return
    yield f"<h2>Conversations</h2><p>{_e(conv.summary_line(section))}</p>"
    for title, head, rows in (
        (conv.regressed_title(section), conv.REGRESSED_HEAD, conv.regressed_rows(section)),
        ("Invalid conversations (left out of the verdict)", conv.INVALID_HEAD,
         conv.invalid_rows(section)),
        ("pass^k over the paired scenarios", conv.PASS_HAT_HEAD, conv.pass_hat_rows(section)),
    ):  # fmt: skip
        if rows:
            yield f"<h3>{_e(title)}</h3>"
            yield _table(head, [[_e(c) for c in row] for row in rows], numeric=())
    more = conv.more_line(section)
    if more:
        yield f'<p class="meta">{_e(more)}</p>'


def _comparison(doc: Mapping[str, Any]) -> Iterator[str]:
    decision = doc["decision"]
    yield f"<h1>{_e(doc['candidate'].get('name') or '-')}: candidate vs baseline</h1>"
    yield (
        f'<p class="meta">candidate {_e(run_title(doc["candidate"]))} · baseline '
        f"{_e(run_title(doc['baseline']))} · {paired_counts(doc)}</p>"
    )
    chosen = baseline_choice(doc)
    if chosen is not None:
        yield f'<p class="{"warn" if chosen[1] else "meta"}">{_e(chosen[0])}</p>'
    # ✓/✗ rather than emoji: they render with the system's ordinary fonts
    kind = outcome_of(decision)
    mark = {"promote": "✓", "block": "✗", "inconclusive": "?"}[kind]
    yield f'<div class="verdict {kind}"><b>{mark}</b> {_e(decision["summary"])}</div>'
    yield _table(
        ["rule", "result", "reason"],
        [
            [
                f'<code class="rule">{_e(r["rule"])}</code>',
                _RULE_CELLS[rule_outcome(r)],
                _e(r["reason"]),
            ]
            for r in decision["rules"]
        ],
        numeric=(),
    )
    yield _warnings(decision.get("warnings") or [])
    yield from _judge_figures(doc.get("judge_figures"))
    yield from _provenance(doc)
    yield "<h2>Metric deltas (candidate − baseline)</h2>"
    yield _forest(doc)
    yield _table(METRIC_HEAD, [cells.metric_row(m, _e) for m in doc["metrics"]])
    yield from _side_epochs(doc.get("epochs"))
    yield from _compared_conversations(doc.get("conversations"))
    yield from _compared_tools(doc.get("tools"))
    tie = shown_tie_break(doc)
    if tie is not None:
        yield f"<p>Tie-break: {_e(tie)}</p>"
    yield f"<p>{cells.changes_line(doc)}</p>"
    for title, key in (("Regressions", "regressions"), ("Improvements", "improvements")):
        rows = doc[key]
        if rows:
            shown = f"{len(rows)} of {cells.change_count(doc, key)}"
            yield f"<h2>{title} ({shown})</h2>" + _table(
                cells.EXAMPLE_HEAD,
                [_example_row(r) for r in rows],
                numeric=[3],
            )


def _provenance(doc: Mapping[str, Any]) -> Iterator[str]:
    rows = provenance_rows(doc)
    if not rows:
        return
    note = not_comparable(doc)
    yield "<h2>Provenance</h2>"
    if note:
        yield f'<p class="warn">⚠ not comparable: {_e(note)}</p>'
    yield _table(
        cells.PROVENANCE_HEAD,
        [
            [_e(label), _e(b), _e(c), f"<b>{_e(flag)}</b>" if flag else ""]
            for label, b, c, flag in rows
        ],
        numeric=(),
    )


def _forest(doc: Mapping[str, Any]) -> str:
    metrics = doc["metrics"]
    margin = (doc["decision"].get("policy") or {}).get("noninferiority_margin")
    score = [m for m in metrics if m["name"] == "weighted_score"]
    gates = [m for m in metrics if m["name"].startswith("gate:")]
    rates = [m for m in metrics if m not in score and m not in gates]
    figures = []
    if score:
        figures.append(
            _figure(
                forest_plot(score, margin=margin, title="Weighted score delta", unit="points"),
                "Weighted score (0..100) delta with its paired 95% interval; the dashed line is "
                "the non-inferiority margin.",
            )
        )
    if rates:
        figures.append(
            _figure(
                forest_plot(
                    rates,
                    margin=None,
                    title="Pass rate and criterion deltas",
                    unit="pp",
                    scale=100.0,
                ),
                "Pass rate and criterion means, in percentage points; higher is better.",
            )
        )
    if gates:
        figures.append(
            _figure(
                forest_plot(
                    gates,
                    margin=None,
                    title="Gate failure rate deltas",
                    unit="pp",
                    scale=100.0,
                    higher_is_worse=True,
                ),
                "Gate failure rates, in percentage points; higher is worse.",
            )
        )
    return "<div class=plots>" + "".join(figures) + "</div>"


def _example_row(row: Mapping[str, Any]) -> list[str]:
    def side(s: Mapping[str, Any], other: Mapping[str, Any]) -> str:
        css = "pass" if s.get("passed") else "fail"
        verdict = f'<span class="{css}">{_e(side_pass(s, other))}</span>'
        grade = f" {_e(s['grade'])}" if s.get("grade") else ""
        score = f" {s['weighted_score']:.1f}" if s.get("weighted_score") is not None else ""
        return verdict + grade + score

    delta = row.get("delta")
    return [
        f"<code>{_e(row['id'])}</code>",
        side(row["baseline"], row["candidate"]),
        side(row["candidate"], row["baseline"]),
        "-" if delta is None else f"{delta:+.1f}",
        _e("; ".join(row.get("changes") or [])),
    ]
