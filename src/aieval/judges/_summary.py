"""Per judge of one or more runs: agreement with its reviewers, certification, and each run's raw
and corrected pass rate; what ``aieval judges`` prints."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aieval.core import JudgeKey, ReviewLabel, SampleRecord
from aieval.errors import ConfigError
from aieval.judges._agreement import ReviewDesign, SampleKey, judge_verdicts, latest_labels
from aieval.judges._certification import (
    DEFAULT_KAPPA_FLOOR,
    DEFAULT_MIN_LABELS,
    Certificate,
    Certification,
    certify,
)
from aieval.judges._correction import corrected_pass_rate
from aieval.stats import CorrectedRate

__all__ = ["JudgeRun", "JudgeSummary", "RunRate", "run_judges", "run_rate", "summarize_judges"]

# What a judge's stored identity holds and a plain scorer's options do not.
_JUDGE_OPTIONS = ("prompt_version", "judge_model")


@dataclass(frozen=True, slots=True)
class JudgeRun:
    """One run as the summary reads it: its id, stored config and samples."""

    run_id: str
    config: Mapping[str, Any]
    samples: Sequence[SampleRecord]


@dataclass(frozen=True, slots=True)
class RunRate:
    """A run's pass rate under the judge: raw and corrected, or why it could not be corrected."""

    run_id: str
    judged: int
    passed: int
    rate: CorrectedRate | None
    refused: str | None = None

    @property
    def raw(self) -> float:
        """The judge's pass share in the run."""
        return self.passed / self.judged if self.judged else 0.0


@dataclass(frozen=True, slots=True)
class JudgeSummary:
    """One judge: its key and threshold, the decision, and every run's rates.

    ``certification`` is ``None`` when no label could be used; ``problem`` then says why.
    ``pooled_labels`` counts the labels used that lie on other runs the judge graded (not in
    the runs asked about): they count for agreement and certification as the rest.
    """

    key: JudgeKey
    threshold: float
    certification: Certification | None
    runs: tuple[RunRate, ...]
    problem: str | None = None
    pooled_labels: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "judge": self.key.label(),
            "digest": self.key.digest,
            "scorer": self.key.scorer,
            "threshold": self.threshold,
            "problem": self.problem,
            "pooled_labels": self.pooled_labels,
            "certification": None if self.certification is None else self.certification.to_dict(),
            "runs": [
                {
                    "run_id": r.run_id,
                    "judged": r.judged,
                    "raw": r.raw,
                    "corrected": None if r.rate is None else r.rate.to_dict(),
                    "refused": r.refused,
                }
                for r in self.runs
            ],
        }


def run_judges(config: Mapping[str, Any]) -> list[tuple[JudgeKey, float]]:
    """The judges a run's stored config names, each with the threshold its score passes at."""
    default = float(config.get("pass_threshold") or 0.5)
    out: list[tuple[JudgeKey, float]] = []
    for entry in config.get("scorers") or []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            continue
        options = entry.get("options") or {}
        if isinstance(options, Mapping) and any(k in options for k in _JUDGE_OPTIONS):
            threshold = entry.get("threshold")
            key = JudgeKey.of(entry["name"], options)
            out.append((key, float(threshold) if threshold is not None else default))
    return out


def summarize_judges(
    runs: Sequence[JudgeRun],
    labels: Iterable[ReviewLabel],
    *,
    scorer: str | None = None,
    floor: float = DEFAULT_KAPPA_FLOOR,
    min_labels: int = DEFAULT_MIN_LABELS,
    certificates: Mapping[str, Certificate] | None = None,
    now: float = 0.0,
    designs: Mapping[str, Sequence[ReviewDesign]] | None = None,
    pooled: Mapping[str, Mapping[SampleKey, bool]] | None = None,
) -> list[JudgeSummary]:
    """Every judge of ``runs`` (or only ``scorer``): agreement on the labels saved for it,
    certification, and each run's raw and corrected pass rate.

    Labels pool across runs graded by the same judge (same :class:`~aieval.core.JudgeKey`).
    ``designs`` holds each judge's review queues by digest; a judge without an entry is
    figured unweighted. ``pooled`` holds, by digest, the judge's verdicts on labelled samples of
    runs not in ``runs`` (the same judge in other runs): they count for agreement and
    certification, and get no rate line.

    Raises:
        ConfigError: the runs have no judge (or none named ``scorer``).
    """
    rows = list(labels)
    judges: dict[str, tuple[JudgeKey, float]] = {}
    for run in runs:
        for key, threshold in run_judges(run.config):
            if scorer is None or key.scorer == scorer:
                judges.setdefault(key.digest, (key, threshold))
    if not judges:
        what = f"judge named {scorer!r}" if scorer else "judge"
        raise ConfigError(
            f"the run(s) have no {what} (a scorer with a judge model or prompt version); "
            "name the runs its judge graded"
        )
    out = []
    for digest, (key, threshold) in judges.items():
        verdicts: dict[SampleKey, bool] = dict((pooled or {}).get(digest, {}))
        per_run: list[tuple[str, dict[SampleKey, bool]]] = []
        for run in runs:
            if any(k.digest == digest for k, _ in run_judges(run.config)):
                mine = judge_verdicts(
                    run.samples, key.scorer, run_id=run.run_id, threshold=threshold
                )
                per_run.append((run.run_id, mine))
                verdicts.update(mine)
        own = [lab for lab in rows if lab.judge == digest]
        named = {run_id for run_id, _ in per_run}
        pooled_labels = sum(
            1
            for lab in latest_labels(own, digest)
            if lab.run_id not in named and (lab.run_id, lab.sample_id) in verdicts
        )
        cert: Certification | None = None
        problem = None
        if not own:
            problem = f"no labels for this judge (labels name it by its digest {digest})"
        else:
            try:
                cert = certify(
                    own,
                    verdicts,
                    judge=digest,
                    floor=floor,
                    min_labels=min_labels,
                    certificate=(certificates or {}).get(digest),
                    threshold=threshold,
                    now=now,
                    design=None if designs is None else designs.get(digest),
                )
            except ConfigError as exc:
                problem = str(exc)
        rates = tuple(run_rate(run_id, mine, cert) for run_id, mine in per_run)
        out.append(JudgeSummary(key, threshold, cert, rates, problem, pooled_labels))
    return out


def run_rate(
    run_id: str, verdicts: Mapping[SampleKey, bool], cert: Certification | None
) -> RunRate:
    """A run's raw pass rate under the judge beside the corrected one, or why it is not
    corrected (no figures, no verdict, or :func:`corrected_pass_rate` refused)."""
    passed = sum(verdicts.values())
    if cert is None:
        return RunRate(run_id, len(verdicts), passed, None, "no agreement figures")
    if not verdicts:
        return RunRate(run_id, 0, 0, None, "the judge scored no sample of this run")
    try:
        rate = corrected_pass_rate(verdicts, cert.agreement)
    except ConfigError as exc:
        return RunRate(run_id, len(verdicts), passed, None, str(exc))
    return RunRate(run_id, len(verdicts), passed, rate)
