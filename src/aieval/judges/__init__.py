"""LLM-as-judge (spec 8): pointwise, rubric, pairwise and multi-judge scorers, calibration.

The judges are scorers and also live in :mod:`aieval.scorers`; this package adds calibration
against human labels and the anti-verbosity padding test.
"""

from aieval.judges._calibration import CalibrationReport, HumanLabel, calibrate, load_labels
from aieval.judges._review_build import QueueRequest, build_queue, judge_of_runs
from aieval.judges._review_io import (
    LABEL_FIELDS,
    MAX_NOTE,
    read_review_labels,
    write_review_labels,
)
from aieval.judges._selection import (
    DEFAULT_MIX,
    SELECTIONS,
    Judged,
    Pick,
    parse_mix,
    select_items,
    verdict_values,
)
from aieval.judges._verbosity import PaddingReport, padding_test
from aieval.scorers import (
    INCONSISTENCY_WARNING_RATE,
    JUDGE_PROMPT_VERSION,
    PAIRWISE_PROMPT_VERSION,
    RUBRIC_PROMPT_VERSION,
    PairwiseOutcome,
    PairwiseReport,
    compare_pairwise,
    compare_pairwise_async,
    llm_judge,
    multi_judge,
    neutralize,
    pairwise_judge,
    rubric_judge,
)

__all__ = [
    "DEFAULT_MIX",
    "INCONSISTENCY_WARNING_RATE",
    "JUDGE_PROMPT_VERSION",
    "LABEL_FIELDS",
    "MAX_NOTE",
    "PAIRWISE_PROMPT_VERSION",
    "RUBRIC_PROMPT_VERSION",
    "SELECTIONS",
    "CalibrationReport",
    "HumanLabel",
    "Judged",
    "PaddingReport",
    "PairwiseOutcome",
    "PairwiseReport",
    "Pick",
    "QueueRequest",
    "build_queue",
    "calibrate",
    "compare_pairwise",
    "compare_pairwise_async",
    "judge_of_runs",
    "llm_judge",
    "load_labels",
    "multi_judge",
    "neutralize",
    "padding_test",
    "pairwise_judge",
    "parse_mix",
    "read_review_labels",
    "rubric_judge",
    "select_items",
    "verdict_values",
    "write_review_labels",
]
