"""The GitHub renderer: a comparison as one pull-request comment or job summary.

The first screen holds what a reviewer decides on: the decision, each rule's reason, whether
the runs are comparable at all, the paired interval against the margin and, for an
inconclusive result, the sample size that would decide it. The worst regressions follow (linked
into the viewer when its address is given), then folded details. The whole body stays under
GitHub's 65,536-character limit: lists are cut between rows, never inside a table, with a line
saying how many rows were left out.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from aieval._records import SampleRecord
from aieval._terminal import escape_github as escape
from aieval._terminal import printable_data, printable_lines
from aieval.errors import ConfigError, RunNotFoundError
from aieval.report import _cells as cells
from aieval.report import _compare_conversations as conv
from aieval.report import _tool_cells as tool_cells
from aieval.report._compare import Comparison
from aieval.report._document import (
    METRIC_HEAD,
    as_document,
    baseline_choice,
    coverage_text,
    not_comparable,
    outcome_of,
    paired_counts,
    provenance_rows,
    rule_outcome,
    run_title,
    shown_tie_break,
)
from aieval.report._epochs import (
    COMPARE_K_HEAD,
    COMPARE_VARIANCE_HEAD,
    side_k_rows,
    side_variance_rows,
)
from aieval.report._judge_cells import (
    JUDGE_FIGURES_HEAD,
    JUDGE_FIGURES_TITLE,
    judge_figure_rows,
    judge_notes,
)
from aieval.report._markdown import table
from aieval.store import Store

__all__ = ["COMMENT_LIMIT", "ExampleTexts", "example_texts", "render_github"]

#: GitHub's limit on a comment's (and a job summary's) characters.
COMMENT_LIMIT = 65_536
#: Regressions shown on the first screen; the rest fold into ``<details>``.
TOP_REGRESSIONS = 10
# room kept for what the action adds around the body (its marker and a footer)
_RESERVE = 2_048

_MARKS = {"promote": "✅", "pass": "✅", "block": "❌", "fail": "❌", "inconclusive": "❔"}
_WORDS = {"promote": "promote", "block": "blocked", "inconclusive": "inconclusive"}


@dataclass(frozen=True, slots=True)
class ExampleTexts:
    """What an example said in both runs, already cut to a preview (see ``docs/reports.md``).

    Attributes:
        input: the example's input (prompt).
        expected: its expected answer (``None``: none).
        baseline: the baseline's prediction, or its error.
        candidate: the candidate's prediction, or its error.
    """

    input: str
    expected: str | None
    baseline: str | None
    candidate: str | None


def render_github(
    obj: Any,
    *,
    viewer_url: str | None = None,
    texts: Mapping[str, ExampleTexts] | None = None,
    limit: int = COMMENT_LIMIT - _RESERVE,
) -> str:
    """Render a comparison as GitHub-flavoured Markdown of at most ``limit`` characters.

    Args:
        obj: a :class:`~aieval.report.Comparison` or its ``to_dict()`` data.
        viewer_url: the aieval viewer's address (``https://evals.example.com``); each listed
            regression then links to its side-by-side page.
        texts: per example id, the answers to show for the top regressions.
        limit: the most characters the body may have.

    Raises:
        ConfigError: ``obj`` is not a comparison, or ``viewer_url`` is not an http(s) address.

    >>> from aieval.report import render_github
    >>> render_github({"kind": "report"})
    Traceback (most recent call last):
    aieval.errors.ConfigError: the github format renders comparisons (aieval compare), not reports
    """
    doc = as_document(obj)
    if doc["kind"] != "comparison":
        raise ConfigError("the github format renders comparisons (aieval compare), not reports")
    doc = printable_data(doc)
    links = _Links(viewer_url, doc["baseline"]["id"], doc["candidate"]["id"])
    head = "\n\n".join(b for b in _first_screen(doc, links) if b)
    tail = "\n\n".join(b for b in _tail(doc) if b)
    budget = limit - len(head) - len(tail) - 8
    if budget < 0:
        raise ConfigError(f"a GitHub comment of at most {limit} characters cannot hold this one")
    middle = "\n\n".join(b for b in _lists(doc, links, texts or {}, budget) if b)
    return "\n\n".join(p for p in (head, middle, tail) if p) + "\n"


def _pre(text: str) -> str:
    """A block of untrusted text shown as it is (HTML-escaped inside ``<pre>``)."""
    return "<pre>" + html.escape(text, quote=False).replace("@", "@\u200b") + "</pre>"


class _Links:
    """Addresses of the viewer's pages for this comparison (none without a viewer URL)."""

    def __init__(self, viewer_url: str | None, baseline: str, candidate: str) -> None:
        if viewer_url is not None:
            parts = urlsplit(viewer_url)
            unsafe = any(c.isspace() or c in "()<>[]\"'`" for c in viewer_url)
            if parts.scheme not in ("http", "https") or not parts.netloc or unsafe:
                raise ConfigError(
                    f"viewer URL {viewer_url!r}: give the viewer's http(s) address, "
                    "such as https://evals.example.com"
                )
        self.base = None if viewer_url is None else viewer_url.split("#")[0].rstrip("/")
        self.query = urlencode({"baseline": baseline, "candidate": candidate})

    def comparison(self) -> str | None:
        return None if self.base is None else f"{self.base}/#/compare?{self.query}"

    def example(self, sample_id: str) -> str | None:
        if self.base is None:
            return None
        return f"{self.base}/#/compare/samples/{quote(sample_id, safe='')}?{self.query}"

    def label(self, sample_id: str) -> str:
        url = self.example(sample_id)
        text = escape(sample_id)
        return text if url is None else f"[{text}]({url})"


def _first_screen(doc: Mapping[str, Any], links: _Links) -> Iterator[str]:
    decision = doc["decision"]
    outcome = outcome_of(decision)
    name = escape(doc["candidate"].get("name") or "-")
    yield f"### {_MARKS[outcome]} aieval: **{_WORDS[outcome]}** · {name}"
    note = not_comparable(doc)
    if note:
        yield f"> ⚠️ **The runs are not comparable:** {escape(note)}"
    # the summary's head ("blocked by rule, rule"); the rules' reasons follow, one per line
    yield escape(str(decision["summary"]).split(": ", 1)[0])
    yield "\n".join(
        f"- {_MARKS[rule_outcome(r)]} `{r['rule']}`: {escape(r['reason'])}"
        for r in decision["rules"]
    )
    yield from _evidence(decision)
    where = links.comparison()
    yield (
        f"Candidate {escape(run_title(doc['candidate']))} vs baseline "
        f"{escape(run_title(doc['baseline']))} · {paired_counts(doc)}"
        + (f" · [open in the viewer]({where})" if where else "")
    )
    chosen = baseline_choice(doc)
    if chosen is not None:
        yield f"> {'⚠️ ' if chosen[1] else ''}{escape(chosen[0])}"
    for side in ("candidate", "baseline"):
        shown = coverage_text(doc[side])
        if shown:  # the rule reasons above quote this side's pass rate
            yield f"> ⚠️ **The {side}'s pass rate leaves out:** {escape(shown)}"
    yield _judge_figures(doc.get("judge_figures"))


def _judge_figures(section: Mapping[str, Any] | None) -> str:
    """The judges' agreement, status and corrected rates, folded under one line of statuses."""
    if not section:
        return ""
    statuses = ", ".join(
        f"{j['judge']} {(j.get('certification') or {}).get('status', 'without labels')}"
        for j in section.get("judges") or []
    )
    rows = judge_figure_rows(section)
    body = [table(JUDGE_FIGURES_HEAD, [[escape(c) for c in r] for r in rows], numeric=())]
    notes = "\n".join(f"- {escape(line)}" for line in judge_notes(section))
    return (
        f"<details><summary>{escape(JUDGE_FIGURES_TITLE)}: {escape(statuses)}</summary>\n\n"
        + "\n\n".join([*(body if rows else []), notes])
        + "\n\n</details>"
    )


def _evidence(decision: Mapping[str, Any]) -> Iterator[str]:
    """The paired interval against the margin, and the sample size that would decide."""
    rule = next((r for r in decision["rules"] if r["rule"] == "weighted_score_noninferior"), None)
    details = (rule or {}).get("details") or {}
    if "lower_bound" not in details:
        return
    alpha = float(details.get("alpha", 0.05))
    margin = float(details.get("margin", 0.0))
    method = str(details.get("method", ""))
    units = "percentage points" if method.startswith("paired-proportion") else "points"
    yield (
        f"**Weighted score** {details['mean_delta']:+.2f} {units} over {details.get('n')} paired "
        f"examples · one-sided {1 - alpha:.0%} interval "
        f"[{details['lower_bound']:+.2f}, {_bound(details.get('upper_bound'))}] · margin "
        f"−{margin:g} · {escape(method)}"
    )
    if rule is not None and rule_outcome(rule) == "inconclusive":
        observed = details.get("examples_needed_at_observed_difference")
        equal = details.get("examples_needed_if_equal")
        parts = []
        if observed is not None:
            parts.append(f"about **{observed:,}** paired examples if the observed difference holds")
        if equal is not None:
            parts.append(f"about {equal:,} for a candidate only as good as the baseline")
        if parts:
            yield "**To decide:** " + "; ".join(parts) + "."


def _bound(value: Any) -> str:
    return f"{value:+.2f}" if isinstance(value, int | float) and abs(value) != float("inf") else "∞"


def _lists(
    doc: Mapping[str, Any], links: _Links, texts: Mapping[str, ExampleTexts], budget: int
) -> Iterator[str]:
    """Regressions (top ones open, the rest folded), answers, metrics, improvements: each added
    while it fits in ``budget`` characters, lists cut between rows."""
    left = budget
    regressions = list(doc.get("regressions") or [])
    total = int(doc.get("regressions_count", len(regressions)))
    head = cells.EXAMPLE_HEAD
    rows = [_example_row(r, links) for r in regressions]
    sections: list[tuple[str, Sequence[str], list[list[str]], int, bool]] = [
        (f"Top regressions ({min(TOP_REGRESSIONS, total)} of {total})", head,
         rows[:TOP_REGRESSIONS], min(TOP_REGRESSIONS, total), False),
        (f"More regressions ({max(0, total - TOP_REGRESSIONS)})", head,
         rows[TOP_REGRESSIONS:], max(0, total - TOP_REGRESSIONS), True),
    ]  # fmt: skip
    for title, headers, body, count, folded in sections:
        if not count:
            continue
        block = _fitted(title, headers, body, count, left, folded)
        if block:
            left -= len(block) + 2
            yield block
    answers = _answers(regressions[:TOP_REGRESSIONS], texts, left)
    if answers:
        left -= len(answers) + 2
        yield answers
    turns = _conversation_turns(doc.get("conversations"), left)
    if turns:
        left -= len(turns) + 2
        yield turns
    tools = _tool_changes(doc.get("tools"), left)
    if tools:
        left -= len(tools) + 2
        yield tools
    metrics = [cells.metric_row(m, escape) for m in doc.get("metrics") or []]
    block = _fitted("Metrics (candidate − baseline)", METRIC_HEAD,
                    metrics, len(metrics), left, folded=True)  # fmt: skip
    if block:
        left -= len(block) + 2
        yield block
    epochs = doc.get("epochs")
    if epochs:
        ks = side_k_rows(epochs)
        block = _fitted("Epochs: pass^k and pass@k by side", COMPARE_K_HEAD, ks, len(ks),
                        left, folded=True)  # fmt: skip
        variance = [[escape(c) for c in r] for r in side_variance_rows(epochs)]
        if variance:
            block += "\n\n" + _fitted("Variance: answers vs judge, by side",
                                      COMPARE_VARIANCE_HEAD, variance, len(variance),
                                      left - len(block) - 2, folded=True)  # fmt: skip
        if block:
            left -= len(block) + 2
            yield block
    improvements = list(doc.get("improvements") or [])
    count = int(doc.get("improvements_count", len(improvements)))
    if count:
        better = [_example_row(r, links) for r in improvements]
        block = _fitted(f"Improvements ({count})", head, better, count, left, folded=True)
        if block:
            left -= len(block) + 2
            yield block
    provenance = _provenance(doc)
    if provenance and len(provenance) <= left:
        yield provenance
    elif provenance:
        yield "_Provenance: left out to keep the comment under GitHub's size limit._"


#: tools listed per scorer in a comment, the most called first (then "N of M tools")
TOOLS_LISTED = 10


def _tool_changes(section: Any, budget: int) -> str:
    """Two runs' per-tool figures, compact: precision and recall per tool of both runs and
    their change, folded; left out when the comment has no room."""
    if not section:
        return ""
    lines, tables = tool_cells.compared_tables(section, limit=TOOLS_LISTED, compact=True)
    block = "\n\n".join(f"**Tools** · {escape(line)}" for line in lines)
    for spec in tables:
        rows = [[escape(c) for c in row] for row in spec.rows]
        block += "\n\n" + _fitted(escape(spec.title), [escape(h) for h in spec.head], rows,
                                   len(rows), budget - len(block) - 40, folded=True)  # fmt: skip
    return block if len(block) <= budget else ""


#: scenarios listed with their first regressed turn in a comment (then "and M more")
CONVERSATIONS_LISTED = 10


def _conversation_turns(section: Mapping[str, Any] | None, budget: int) -> str:
    """Two runs of conversations: the summary (invalid ones left out of the verdict) and the
    first regressed turn of the first scenarios, then how many more."""
    if not section:
        return ""
    line = f"**Conversations** · {escape(conv.summary_line(section))}"
    rows = [[escape(c) for c in row] for row in conv.regressed_rows(section)]
    shown = rows[:CONVERSATIONS_LISTED]
    block = line
    if shown:
        title = f"First regressed turn ({len(shown)} of {section.get('regressed_total', 0)})"
        block += "\n\n" + _fitted(title, conv.REGRESSED_HEAD, shown, len(shown),
                                   budget - len(line) - 40, folded=False)  # fmt: skip
    more = int(section.get("regressed_total", 0)) - len(shown)
    if more > 0:
        block += f"\n\n_and {more} more_"
    return block if len(block) <= budget else ""


def _fitted(
    title: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    total: int,
    budget: int,
    folded: bool,
) -> str:
    """A table of as many ``rows`` as fit in ``budget`` characters, then a line naming how many
    of ``total`` were left out (only that line when not even the table's head fits)."""
    open_, close = (f"<details><summary>{title}</summary>\n\n", "\n\n</details>") if folded else (
        f"**{title}**\n\n", "")  # fmt: skip
    header = "| " + " | ".join(headers) + " |\n| " + " | ".join(
        ":---" if i in (0, len(headers) - 1) else "---:" for i in range(len(headers))
    ) + " |"  # fmt: skip
    note = "\n\n_{} of {:,} rows left out to keep the comment under GitHub's size limit._"
    fixed = len(open_) + len(header) + len(close) + len(note) + 24
    if fixed > budget:
        return f"_{title}: left out to keep the comment under GitHub's size limit._"
    used, lines = fixed, []
    for row in rows:
        line = "\n| " + " | ".join(row) + " |"
        if used + len(line) > budget:
            break
        lines.append(line)
        used += len(line)
    missing = total - len(lines)
    if not lines:
        return f"_{title}: left out to keep the comment under GitHub's size limit._"
    text = open_ + header + "".join(lines)
    if missing:
        text += note.format(f"{missing:,}", total)
    return text + close


def _example_row(row: Mapping[str, Any], links: _Links) -> list[str]:
    return cells.example_row(row, escape, links.label(str(row["id"])))


def _answers(
    regressions: Sequence[Mapping[str, Any]], texts: Mapping[str, ExampleTexts], budget: int
) -> str:
    """The top regressions' input, expected answer and both answers, folded."""
    blocks = []
    used = 120
    for row in regressions:
        found = texts.get(str(row["id"]))
        if found is None:
            continue
        parts = [f"**{escape(row['id'])}**", "input", _pre(found.input)]
        if found.expected is not None:
            parts += ["expected", _pre(found.expected)]
        parts += ["baseline", _pre(found.baseline or "(none)")]
        parts += ["candidate", _pre(found.candidate or "(none)")]
        block = "\n\n".join(parts)
        if used + len(block) > budget:
            break
        blocks.append(block)
        used += len(block) + 2
    if not blocks:
        return ""
    return (
        f"<details><summary>Answers of the top regressions ({len(blocks)})</summary>\n\n"
        + "\n\n".join(blocks)
        + "\n\n</details>"
    )


def _provenance(doc: Mapping[str, Any]) -> str:
    rows = provenance_rows(doc)
    if not rows:
        return ""
    flagged = sum(1 for *_, flag in rows if flag)
    lines = [
        "| | baseline | candidate | |",
        "| :--- | :--- | :--- | :--- |",
        *(
            f"| {escape(label)} | {escape(b)} | {escape(c)} | {f'**{flag}**' if flag else ''} |"
            for label, b, c, flag in rows
        ),
    ]
    return (
        f"<details><summary>Provenance ({flagged} of {len(rows)} differ)</summary>\n\n"
        + "\n".join(lines)
        + "\n\n</details>"
    )


def _tail(doc: Mapping[str, Any]) -> Iterator[str]:
    tie = shown_tie_break(doc)
    if tie is not None:
        yield f"Tie-break: {escape(tie)}"
    yield cells.changes_line(doc)
    warnings = doc["decision"].get("warnings") or []
    shown = [f"> ⚠️ {escape(w)}" for w in warnings[:10]]
    if len(warnings) > 10:
        shown.append(f"> … {len(warnings) - 10} more warnings (aieval compare --format json)")
    yield "\n".join(shown)


#: Characters of one text shown in a comment.
PREVIEW_CHARS = 300


def example_texts(
    store: Store,
    comparison: Mapping[str, Any] | Comparison,
    *,
    limit: int = TOP_REGRESSIONS,
    baseline_store: Store | None = None,
) -> dict[str, ExampleTexts]:
    """The input, expected answer and both answers of a comparison's first ``limit``
    regressions, each cut to :data:`PREVIEW_CHARS` characters, for :func:`render_github`."""
    doc = as_document(comparison)
    base_store = store if baseline_store is None else baseline_store
    out = {}
    for row in doc["regressions"][:limit]:
        sample_id = str(row["id"])
        base = _sample(base_store, doc["baseline"]["id"], sample_id)
        cand = _sample(store, doc["candidate"]["id"], sample_id)
        known = cand or base
        if known is None:
            continue
        out[sample_id] = ExampleTexts(
            input=_clip(known.prompt),
            expected=None if known.expected is None else _clip(known.expected),
            baseline=_answer(base),
            candidate=_answer(cand),
        )
    return out


def _sample(store: Store, run_id: str, sample_id: str) -> SampleRecord | None:
    try:
        return store.get_sample(run_id, sample_id)
    except RunNotFoundError:
        return None


def _answer(record: SampleRecord | None) -> str | None:
    if record is None:
        return None
    if record.error:
        return _clip(f"error: {record.error}")
    return None if record.prediction is None else _clip(record.prediction)


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= PREVIEW_CHARS:
        return printable_lines(text)
    left = len(text) - PREVIEW_CHARS
    return printable_lines(text[:PREVIEW_CHARS]) + f"… [{left:,} more characters]"
