"""What the promotion policy's rules read, as one typed object both comparison paths build.

The record path (``_compare``) builds it from paired :class:`ExampleNumbers` with
:func:`example_inputs`; the column path (``_compare_columns``) from arrays of plain verdicts.
``_policy.decide`` applies the rules to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from aieval.report._evidence import Coverage, PassCounts, PassValues, coverage, unscored_pair
from aieval.report._samples import ExampleNumbers

__all__ = ["DecisionInputs", "JudgeShares", "PassCounts", "ScoreSums", "example_inputs"]

#: ``{judge: (malformed verdicts, verdicts)}``.
JudgeShares = Mapping[str, tuple[int, int]]


@dataclass(frozen=True, slots=True)
class ScoreSums:
    """The weighted-score evidence as sums, in place of the per-example arrays (what a database
    adds up when the test is in closed form; ``docs/architecture.md``, "Sums in the database").

    Attributes:
        n: the examples the arrays would hold (every example the baseline scored).
        delta: the sum of ``candidate - baseline`` over them (0 for the candidate where it is
            missing or left one unscored).
        delta_squares: the sum of its squares.
        wins: when every score is 0 or 100, the examples the candidate alone has at 100;
            ``None`` otherwise.
        losses: the same for the baseline alone.
    """

    n: int
    delta: float
    delta_squares: float
    wins: int | None = None
    losses: int | None = None

    @property
    def binary(self) -> bool:
        """Whether every score is 0 or 100 (the paired-proportion test applies)."""
        return self.wins is not None and self.losses is not None


@dataclass(frozen=True, slots=True)
class DecisionInputs:
    """The evidence of one comparison, rule by rule (in the policy's order).

    Attributes:
        coverage: the baseline's scored examples the candidate left missing or unscored
            (``candidate_coverage``).
        changed_inputs: ids of paired examples whose input differs between the runs
            (``comparable_runs``, as the three fields after it).
        changed_expected: ids of paired examples whose expected answer differs.
        scorer_changes: one line per scorer both runs have whose stored options differ.
        grading_differs: ids of paired examples workflow-graded in one run only.
        scored_paired: paired examples scored in both runs (``paired_examples``).
        graded_pairs: the paired examples where either side recorded hard gates or criteria
            (``hard_gate_failure_rate``, ``critical_floor_regression``, ``severe_failures``);
            a plain verdict records neither, so a comparison of plain runs has none.
        baseline_scores: the baseline's promotion score of each example it scored, paired ones
            first (``weighted_score_noninferior``).
        candidate_scores: the candidate's score of the same examples, 0 where it is missing or
            did not score one.
        pass_values: the paired examples' pass values (``pass_rate_not_worse``), or their
            table (:class:`PassCounts`).
        score_sums: the two arrays' sums in their place (closed-form tests only); the rule
            reads these when given.
        judges: the candidate judges' malformed and total verdicts (``judge_verdicts_readable``).
        baseline_judges: the same for the baseline's judges.
        unpaired: examples present in only one run (a warning).
        warnings: further warnings to carry into the decision.
    """

    coverage: Coverage
    scored_paired: int
    baseline_scores: np.ndarray
    candidate_scores: np.ndarray
    pass_values: PassValues | PassCounts
    changed_inputs: Sequence[str] = ()
    changed_expected: Sequence[str] = ()
    scorer_changes: Sequence[str] = ()
    grading_differs: Sequence[str] = ()
    graded_pairs: Sequence[tuple[ExampleNumbers, ExampleNumbers]] = ()
    judges: JudgeShares = field(default_factory=dict)
    baseline_judges: JudgeShares = field(default_factory=dict)
    unpaired: int = 0
    warnings: Sequence[str] = ()
    score_sums: ScoreSums | None = None


def example_inputs(
    baseline: Sequence[ExampleNumbers],
    candidate: Sequence[ExampleNumbers],
    *,
    unpaired: int = 0,
    warnings: Sequence[str] = (),
    baseline_only: Sequence[ExampleNumbers] = (),
    judges: JudgeShares | None = None,
    changed_inputs: Sequence[str] = (),
    baseline_judges: JudgeShares | None = None,
    changed_expected: Sequence[str] = (),
    scorer_changes: Sequence[str] = (),
) -> DecisionInputs:
    """The inputs of paired examples (``baseline[i]`` and ``candidate[i]`` are the same
    example; see ``decide_promotion`` for the arguments)."""
    pairs = list(zip(baseline, candidate, strict=True))
    # every example the baseline scored takes part; the candidate's missing or unscored ones
    # count 0 points
    scores = [
        (b.promotion_score, 0.0 if c is None or unscored_pair(b, c) else c.promotion_score)
        for b, c in [*pairs, *((b, None) for b in baseline_only)]
        if b.promotion_score is not None
    ]
    return DecisionInputs(
        coverage=coverage(baseline, candidate, baseline_only),
        scored_paired=sum(
            b.promotion_score is not None and not unscored_pair(b, c) for b, c in pairs
        ),
        baseline_scores=np.array([b for b, _ in scores], dtype=float),
        candidate_scores=np.array([c for _, c in scores], dtype=float),
        pass_values=PassValues(
            [b.pass_value for b in baseline],
            [c.pass_value for c in candidate],
            lost=sum(b.passed and not c.passed for b, c in pairs),
            gained=sum(c.passed and not b.passed for b, c in pairs),
            shares=any(ex.pass_share is not None for pair in pairs for ex in pair),
        ),
        changed_inputs=changed_inputs,
        changed_expected=changed_expected,
        scorer_changes=scorer_changes,
        grading_differs=[c.id for b, c in pairs if b.graded != c.graded],
        graded_pairs=[(b, c) for b, c in pairs if b.gates or c.gates or b.criteria or c.criteria],
        judges=judges or {},
        baseline_judges=baseline_judges or {},
        unpaired=unpaired,
        warnings=warnings,
    )
