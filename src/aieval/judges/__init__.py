"""LLM-as-judge (spec 8): pointwise, rubric, pairwise and multi-judge scorers, calibration.

The judges are scorers and also live in :mod:`aieval.scorers`; this package adds calibration
against human labels, agreement with reviewers on pass/fail (kappa, TPR, TNR with intervals),
certification, the corrected pass rate, and the anti-verbosity padding test.
"""

from aieval.judges._agreement import (
    Agreement,
    ReviewDesign,
    SampleKey,
    agreement,
    judge_verdicts,
)
from aieval.judges._calibration import CalibrationReport, HumanLabel, calibrate, load_labels
from aieval.judges._certification import (
    DEFAULT_KAPPA_FLOOR,
    DEFAULT_MIN_LABELS,
    Certificate,
    Certification,
    CertificationStatus,
    certify,
    labels_to_settle,
)
from aieval.judges._correction import corrected_pass_rate, judge_error_rates
from aieval.judges._live import queue_agreement
from aieval.judges._review_build import QueueRequest, build_queue, judge_of_runs
from aieval.judges._review_io import (
    CLOCK_SKEW,
    EARLIEST,
    LABEL_FIELDS,
    MAX_NOTE,
    MAX_REVIEWER,
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
from aieval.judges._stored import judge_design, labelled_verdicts, stored_summaries
from aieval.judges._summary import (
    JudgeRun,
    JudgeSummary,
    RunRate,
    run_judges,
    run_rate,
    summarize_judges,
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
    "CLOCK_SKEW",
    "DEFAULT_KAPPA_FLOOR",
    "DEFAULT_MIN_LABELS",
    "DEFAULT_MIX",
    "EARLIEST",
    "INCONSISTENCY_WARNING_RATE",
    "JUDGE_PROMPT_VERSION",
    "LABEL_FIELDS",
    "MAX_NOTE",
    "MAX_REVIEWER",
    "PAIRWISE_PROMPT_VERSION",
    "RUBRIC_PROMPT_VERSION",
    "SELECTIONS",
    "Agreement",
    "CalibrationReport",
    "Certificate",
    "Certification",
    "CertificationStatus",
    "HumanLabel",
    "JudgeRun",
    "JudgeSummary",
    "Judged",
    "PaddingReport",
    "PairwiseOutcome",
    "PairwiseReport",
    "Pick",
    "QueueRequest",
    "ReviewDesign",
    "RunRate",
    "SampleKey",
    "agreement",
    "build_queue",
    "calibrate",
    "certify",
    "compare_pairwise",
    "compare_pairwise_async",
    "corrected_pass_rate",
    "judge_design",
    "judge_error_rates",
    "judge_of_runs",
    "judge_verdicts",
    "labelled_verdicts",
    "labels_to_settle",
    "llm_judge",
    "load_labels",
    "multi_judge",
    "neutralize",
    "padding_test",
    "pairwise_judge",
    "parse_mix",
    "queue_agreement",
    "read_review_labels",
    "rubric_judge",
    "run_judges",
    "run_rate",
    "select_items",
    "stored_summaries",
    "summarize_judges",
    "verdict_values",
    "write_review_labels",
]
