"""Calibration of a judge against human labels, stored per judge model and prompt version."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from aieval._records import SampleRecord
from aieval.errors import ConfigError, DatasetError
from aieval.stats import (
    ConfidenceInterval,
    bootstrap_ci,
    cohen_kappa,
    exact_agreement,
    mean_absolute_error,
    spearman,
)
from aieval.store import CalibrationRow, Store

__all__ = ["CalibrationReport", "HumanLabel", "calibrate", "load_labels"]

_PREFERENCES = {"a": "win", "b": "loss", "tie": "tie", "win": "win", "loss": "loss"}


@dataclass(slots=True, frozen=True)
class HumanLabel:
    """One human judgement: a score (on the judge's scale) or a pairwise preference."""

    id: str
    score: float | None = None
    preference: str | None = None


def load_labels(path: str | Path) -> list[HumanLabel]:
    """Read a JSONL file of ``{"id": ..., "score": n}`` or ``{"id": ..., "preference": "a"}``.

    ``preference`` is ``a`` (A is better), ``b`` or ``tie``. Errors name the file and line.
    """
    labels: list[HumanLabel] = []
    source = str(path)
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DatasetError(f"cannot read the labels: {exc}", source=source) from exc
    for number, line in enumerate(lines, start=1):
        if line.strip():
            labels.append(_label(line, source, number))
    if not labels:
        raise DatasetError("no labels; write one JSON object per line", source=source)
    return labels


def _label(line: str, source: str, number: int) -> HumanLabel:
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise DatasetError(f"not JSON: {exc}", source=source, line=number) from None
    if not isinstance(row, dict) or "id" not in row:
        raise DatasetError("each line needs an 'id' field", source=source, line=number)
    score, pref = row.get("score"), row.get("preference")
    if pref is not None:
        if str(pref).lower() not in _PREFERENCES:
            raise DatasetError(
                f"'preference' must be a, b or tie, got {pref!r}", source=source, line=number
            )
        return HumanLabel(str(row["id"]), preference=_PREFERENCES[str(pref).lower()])
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise DatasetError(
            f"field 'score' must be a number (or give 'preference'), got {score!r}",
            source=source,
            line=number,
        )
    return HumanLabel(str(row["id"]), score=float(score))


@dataclass(slots=True)
class CalibrationReport:
    """Agreement of a judge with human labels, with 95% bootstrap intervals.

    Attributes:
        judge: the judge's scorer name.
        model / model_version / prompt_version: what produced the verdicts.
        n: matched (labelled and scored) samples.
        metrics: ``exact_agreement``, ``cohen_kappa``, and for scores ``quadratic_kappa``,
            ``spearman``, ``mae``, and ``length_spearman`` (verdict vs output length).
        drift: per metric, this estimate minus the previous calibration's of the same judge.
        previous: that previous calibration, if any.
        warnings: e.g. unmatched labels, a verdict that tracks output length.
    """

    judge: str
    model: str | None
    model_version: str | None
    prompt_version: str | None
    n: int
    metrics: dict[str, ConfidenceInterval]
    drift: dict[str, float] = field(default_factory=dict)
    previous: CalibrationRow | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: every field but ``previous``, in order."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "previous"}
        return {**data, "metrics": {k: v.to_dict() for k, v in self.metrics.items()}}


def calibrate(
    samples: Sequence[SampleRecord],
    labels: Sequence[HumanLabel] | str | Path,
    *,
    scorer: str | None = None,
    store: Store | None = None,
    run_id: str | None = None,
    seed: int = 0,
) -> CalibrationReport:
    """Measure how well a judge's verdicts in a run agree with human labels.

    Scores are compared on the judge's raw scale when the score's ``raw`` is a number (0..10
    for ``llm_judge``), else on the normalized 0..1 value; label scores must be on that scale.
    Kappa treats scores rounded to whole points as ordinal categories (see
    ``_whole_points``: a half point rounds up); ``linear_kappa`` and ``quadratic_kappa``
    weight disagreements by their distance on that scale. Preferences (``a``,
    ``b``, ``tie``) are compared with a pairwise judge's outcome.

    With a ``store`` the result is saved per judge, model and prompt version, and ``drift``
    reports the change since the judge's previous calibration.
    """
    label_path = str(labels) if isinstance(labels, str | Path) else None
    rows = load_labels(labels) if isinstance(labels, str | Path) else list(labels)
    name = scorer or _only_judge(samples)
    by_id = {s.id: s for s in samples}
    matched = [(lab, by_id[lab.id]) for lab in rows if lab.id in by_id]
    matched = [
        (lab, s) for lab, s in matched if name in s.scores and s.scores[name].value is not None
    ]
    if len(matched) < 2:
        raise ConfigError(
            f"calibrate: only {len(matched)} labelled sample(s) have a {name!r} score; "
            "the label ids must match the run's sample ids"
        )
    if all(lab.preference is not None for lab, _ in matched):
        metrics = _preference_metrics(matched, name, seed)
    else:
        metrics = _score_metrics(matched, name, seed)
    meta = matched[0][1].scores[name].metadata
    versions = meta.get("judge_model_version")
    report = CalibrationReport(
        judge=name,
        model=meta.get("judge_model"),
        model_version=",".join(versions) if isinstance(versions, list) else versions,
        prompt_version=meta.get("prompt_version"),
        n=len(matched),
        metrics=metrics,
    )
    if len(matched) < len(rows):
        report.warnings.append(f"{len(rows) - len(matched)} label(s) matched no scored sample")
    length = metrics.get("length_spearman")
    if length is not None and abs(length.estimate) > 0.5:
        report.warnings.append(
            f"verdicts track output length (Spearman {length.estimate:.2f}): check for "
            "verbosity bias with padding_test"
        )
    if store is not None:
        _store(store, report, run_id, label_path)
    return report


def _only_judge(samples: Sequence[SampleRecord]) -> str:
    names = {
        n for s in samples for n, sc in s.scores.items() if "prompt_version" in (sc.metadata or {})
    }
    if len(names) != 1:
        found = ", ".join(sorted(names)) or "none"
        raise ConfigError(f"calibrate: name the judge's scorer (judge scorers found: {found})")
    return names.pop()


def _score_metrics(
    matched: list[tuple[HumanLabel, SampleRecord]], name: str, seed: int
) -> dict[str, ConfidenceInterval]:
    scores = [s.scores[name] for _, s in matched]
    use_raw = all(isinstance(sc.raw, int | float) and not isinstance(sc.raw, bool) for sc in scores)
    judge = [float(sc.raw if use_raw else sc.value) for sc in scores]  # type: ignore[arg-type]
    human = [float(lab.score) for lab, _ in matched if lab.score is not None]
    if len(human) != len(judge):
        raise ConfigError("calibrate: mix of score and preference labels; use one kind per file")
    grid = 1.0 if use_raw else 0.25
    hj, hh = _whole_points(judge, grid), _whole_points(human, grid)
    scale = sorted(set(hj) | set(hh))
    lengths = [float(len(s.prediction or "")) for _, s in matched]

    def ci(fn: Any, *data: Sequence[Any]) -> ConfidenceInterval:
        return bootstrap_ci(fn, *data, seed=seed)

    return {
        "exact_agreement": ci(exact_agreement, hh, hj),
        "cohen_kappa": ci(lambda a, b: cohen_kappa(a, b, labels=scale), hh, hj),
        "linear_kappa": ci(lambda a, b: cohen_kappa(a, b, weights="linear", labels=scale), hh, hj),
        "quadratic_kappa": ci(
            lambda a, b: cohen_kappa(a, b, weights="quadratic", labels=scale), hh, hj
        ),
        "spearman": ci(spearman, human, judge),
        "mae": ci(mean_absolute_error, human, judge),
        "length_spearman": ci(spearman, judge, lengths),
    }


def _whole_points(values: Sequence[float], grid: float = 1.0) -> list[int]:
    """Scores as whole steps of ``grid`` for kappa, a half step rounding up.

    A median of two verdicts can fall on a half point (7.5); Python's ``round`` sends 6.5 down
    and 7.5 up (half to even), which moves agreement by chance of parity. Rounding half up
    treats every half point alike: it counts as the higher point.

    Example:
        >>> _whole_points([6.5, 7.5, 2.49, 0.0])
        [7, 8, 2, 0]
    """
    return [math.floor(v / grid + 0.5) for v in values]


def _preference_metrics(
    matched: list[tuple[HumanLabel, SampleRecord]], name: str, seed: int
) -> dict[str, ConfidenceInterval]:
    human = [str(lab.preference) for lab, _ in matched]
    judge = [str(s.scores[name].raw) for _, s in matched]
    labels = ["loss", "tie", "win"]
    return {
        "exact_agreement": bootstrap_ci(exact_agreement, human, judge, seed=seed),
        "cohen_kappa": bootstrap_ci(
            lambda a, b: cohen_kappa(a, b, labels=labels), human, judge, seed=seed
        ),
    }


def _store(store: Store, report: CalibrationReport, run_id: str | None, labels: str | None) -> None:
    history = store.calibrations(report.judge, limit=1)
    if history:
        report.previous = history[0]
        before = history[0].metrics
        report.drift = {
            k: v.estimate - float(before[k]["estimate"])
            for k, v in report.metrics.items()
            if k in before
        }
    store.record_calibration(
        judge=report.judge,
        n=report.n,
        metrics={k: v.to_dict() for k, v in report.metrics.items()},
        model=report.model,
        model_version=report.model_version,
        prompt_version=report.prompt_version,
        run_id=run_id,
        labels=labels,
    )
