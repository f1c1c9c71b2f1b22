"""``aieval calibrate``, ``aieval judges`` and ``aieval rubric validate``: a judge against human
labels (agreement, certification, corrected pass rate), and rubric files checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from aieval._terminal import printable
from aieval.cli._help import HelpCommand, HelpGroup
from aieval.cli._options import DbOption, RunRef, existing_store
from aieval.cli._print import labelled, num, out, when

__all__ = ["calibrate_command", "judges_command", "rubric_app"]


def calibrate_command(
    run_ref: RunRef,
    labels: Annotated[Path, typer.Argument(help="Human labels, JSONL: id + score or preference.")],
    scorer_name: Annotated[
        str | None, typer.Option("--scorer", help="The judge's scorer name in the run.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    db: DbOption = None,
) -> None:
    """Agreement of a judge with human labels (with 95% CIs), stored, and drift since last time."""
    from aieval.judges import calibrate

    store = existing_store(db)
    row = store.get_run(run_ref)
    report = calibrate(
        list(store.iter_samples(row.id)), labels, scorer=scorer_name, store=store, run_id=row.id
    )
    if as_json:
        out.print_json(json.dumps(report.to_dict(), default=str), ensure_ascii=True)
        return
    title = printable(
        f"{report.judge} · {report.model or '-'} · prompt {report.prompt_version or '-'} · "
        f"n={report.n}"
    )
    table = Table(title=title, title_justify="left")
    for column in ("metric", "estimate", "95% CI", "drift"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for metric, ci in report.metrics.items():
        drift = report.drift.get(metric)
        table.add_row(
            metric,
            num(ci.estimate),
            f"{ci.low:.3f} – {ci.high:.3f}",
            "-" if drift is None else f"{drift:+.3f}",
        )
    out.print(table)
    if report.previous is not None:
        prev = report.previous
        out.print(
            f"previous: {when(prev.created_at)} · {prev.model or '-'} · "
            f"prompt {prev.prompt_version or '-'} · n={prev.n}"
        )
    for warning in report.warnings:
        out.print(labelled("warning:", "yellow", warning), highlight=False)


def judges_command(
    run_refs: Annotated[list[str], typer.Argument(help="Runs graded by the judge(s).")],
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels",
            help="Review labels, JSONL: judge, run_id, sample_id, reviewer, passed|score."
            " Default: the labels saved in the store (review queues, `aieval review import`).",
        ),
    ] = None,
    scorer_name: Annotated[
        str | None, typer.Option("--scorer", help="Only the judge with this scorer name.")
    ] = None,
    floor: Annotated[
        float,
        typer.Option("--kappa-floor", help="Certify at a kappa lower bound of at least this."),
    ] = 0.6,
    min_labels: Annotated[
        int, typer.Option("--min-labels", help="Certify only on at least this many labelled items.")
    ] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    db: DbOption = None,
) -> None:
    """Each judge against its reviewers: kappa (judge-human, human-human), TPR, TNR with 95%
    intervals, base rate, status (certified, uncertified, drifting), raw and corrected pass rate."""
    from aieval.judges import JudgeRun, read_review_labels, stored_summaries

    store = existing_store(db)
    runs = []
    for ref in run_refs:
        row = store.get_run(ref)
        runs.append(JudgeRun(row.id, row.config, list(store.iter_samples(row.id))))
    # the store's certificates and review designs; its labels unless a file gives them
    summaries = stored_summaries(
        store,
        runs,
        labels=None if labels is None else read_review_labels(labels),
        scorer=scorer_name,
        floor=floor,
        min_labels=min_labels,
    )
    held = {c.judge for s in summaries for c in store.certificates(s.key.digest, limit=1)}
    for summary in summaries:
        new = summary.certification
        if new is not None and new.certificate is not None and summary.key.digest not in held:
            c = new.certificate
            store.record_certificate(
                judge=c.judge, label=summary.key.label(), n=c.n, kappa=c.kappa, bound=c.bound,
                floor=c.floor, certified_at=c.certified_at,
            )  # fmt: skip
    if as_json:
        data = [s.to_dict() for s in summaries]
        out.print_json(json.dumps(data, default=str), ensure_ascii=True)
        return
    for summary in summaries:
        _print_judge(summary)


def _interval(ci: Any) -> str:
    return "-" if ci is None else f"{ci.estimate:.3f} ({ci.low:.3f} – {ci.high:.3f})"


def _print_judge(summary: Any) -> None:
    key, cert = summary.key, summary.certification
    out.print(
        Text.assemble(
            (printable(key.label()), "bold"),
            f"  judge {key.digest} · passes at {summary.threshold}",
        )
    )
    if cert is None:
        out.print(labelled("no figures:", "yellow", summary.problem or "-"), highlight=False)
        return
    agree = cert.agreement
    style = {"certified": "green", "uncertified": "yellow", "drifting": "red"}[str(cert.status)]
    out.print(labelled(f"{cert.status}:", style, cert.reason), highlight=False)
    table = Table(title_justify="left")
    for column in ("figure", "estimate (95% CI)", "n"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    kappa = (
        _interval(agree.judge_human)
        if agree.judge_human_undefined is None
        else f"n/a ({agree.judge_human_undefined})"
    )
    table.add_row(f"{agree.kappa_name} judge-human", kappa, str(agree.items))
    table.add_row("kappa human-human", _interval(agree.human_human), str(agree.human_human_items))
    table.add_row("TPR (judge pass | human pass)", _interval(agree.tpr), str(agree.positives))
    table.add_row("TNR (judge fail | human fail)", _interval(agree.tnr), str(agree.negatives))
    table.add_row("base rate (human pass)", num(agree.base_rate), str(agree.items))
    out.print(table)
    out.print(
        "weighted by the review queues' design (human-human kappa and the counts are not)"
        if agree.weighted
        else f"unweighted: {printable(agree.unweighted or '-')}",
        highlight=False,
    )
    # labels pool across the stored runs the judge graded: say how many lie on runs not named
    pooled = (
        f", {summary.pooled_labels} of them on other stored runs the judge graded"
        if summary.pooled_labels
        else ""
    )
    out.print(
        f"{agree.labels} label(s) by {agree.reviewers} reviewer(s){pooled}; {agree.ties} tied "
        f"item(s) left out; {agree.unmatched} label(s) on samples no stored run of the judge "
        "graded (or left unscored)"
    )
    for run in summary.runs:
        if run.rate is None:
            out.print(
                f"run {printable(run.run_id)}: raw pass rate {run.raw:.1%} (n={run.judged}); "
                f"not corrected: {printable(run.refused or '-')}",
                highlight=False,
            )
            continue
        rate = run.rate
        clipped = " (clipped to 0..1)" if rate.clipped else ""
        # the unweighted reason is printed once above, under the agreement figures
        source = " with weighted TPR/TNR" if rate.weighted else ""
        # pass rates as percentages to one decimal, as reports and the promotion rules give them
        out.print(
            f"run {printable(run.run_id)}: raw pass rate {rate.raw:.1%} "
            f"({rate.raw_interval.low:.1%} – {rate.raw_interval.high:.1%}), corrected "
            f"{rate.corrected:.1%} ({rate.low:.1%} – {rate.high:.1%}){clipped}{source}, "
            f"n={rate.n}",
            highlight=False,
        )


rubric_app = typer.Typer(cls=HelpGroup, help="Work with rubric files.", no_args_is_help=False)


@rubric_app.command("validate", cls=HelpCommand)
def rubric_validate_command(
    files: Annotated[list[Path], typer.Argument(help="Rubric YAML files.")],
) -> None:
    """Validate rubric files; exit 1 if any is invalid, naming file, criterion and field."""
    from aieval.grading import validate_rubric_files

    failed = 0
    for path, problem in validate_rubric_files(files):
        if problem is None:
            out.print(Text.assemble(("ok     ", "green"), " ", printable(str(path))))
        else:
            failed += 1
            out.print(labelled("invalid", "red", problem), highlight=False)
    if failed:
        raise typer.Exit(1)
