"""Human review of a judge: which judge, and one reviewer's label on one judged sample.

The review queue (server and store) writes these; agreement, certification and the corrected
pass rate (:mod:`aieval.judges`) read them. JSONL import and export live in
:mod:`aieval.judges`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from aieval.errors import ConfigError

__all__ = ["JudgeKey", "ReviewLabel"]


@dataclass(frozen=True, slots=True)
class JudgeKey:
    """Which judge: a scorer's name and what decides its verdicts.

    ``identity`` is the scorer's options as the run stored them (for a judge they include its
    rubric digest, model, prompt version and sample count), sorted. Two runs whose judge has
    the same key were graded by the same judge, so their labels pool.
    """

    scorer: str
    identity: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, scorer: str, identity: Mapping[str, object] | None = None) -> JudgeKey:
        """The key of ``scorer`` with ``identity`` (values kept as text, keys sorted)."""
        if not scorer:
            raise ConfigError("a judge needs a scorer name")
        items = tuple(sorted((str(k), str(v)) for k, v in (identity or {}).items()))
        return cls(scorer=scorer, identity=items)

    @property
    def digest(self) -> str:
        """A short stable id of this judge (16 hex digits), used as the stored key."""
        text = json.dumps([self.scorer, list(self.identity)], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    @property
    def model(self) -> str | None:
        """The judge's model as configured, when its identity names one."""
        return dict(self.identity).get("judge_model")

    def label(self) -> str:
        """``scorer`` or ``scorer@model``: how reports name the judge."""
        model = self.model
        return f"{self.scorer}@{model}" if model else self.scorer


@dataclass(frozen=True, slots=True)
class ReviewLabel:
    """One reviewer's label on one judged sample.

    Attributes:
        judge: :attr:`JudgeKey.digest` of the judge under review.
        run_id: the run holding the sample.
        sample_id: the sample's id in that run (with its epoch suffix, as stored).
        reviewer: who labelled it (the name of the server token that saved it, or the name an
            imported file gives).
        passed: the reviewer's pass/fail, or None when the label is a score.
        score: the reviewer's score on the judge's normalized 0..1 scale, or None.
        note: the reviewer's free text.
        labelled_at: when, in seconds since the epoch.
    """

    judge: str
    run_id: str
    sample_id: str
    reviewer: str
    passed: bool | None = None
    score: float | None = None
    note: str = ""
    labelled_at: float = field(default=0.0)

    def __post_init__(self) -> None:
        if self.passed is None and self.score is None:
            raise ConfigError(
                f"the label of sample {self.sample_id!r} by {self.reviewer!r} has neither"
                " a pass/fail nor a score"
            )
        if self.score is not None and not (math.isfinite(self.score) and 0 <= self.score <= 1):
            raise ConfigError(
                f"the label of sample {self.sample_id!r} by {self.reviewer!r} has score"
                f" {self.score!r}; a score is a number from 0 to 1"
            )
        if not self.reviewer:
            raise ConfigError(f"the label of sample {self.sample_id!r} names no reviewer")

    def positive(self, threshold: float = 0.5) -> bool:
        """The label as pass/fail: ``passed``, or its score at or above ``threshold``."""
        if self.passed is not None:
            return self.passed
        assert self.score is not None
        return self.score >= threshold
