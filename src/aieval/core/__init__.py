"""Stage contracts shared by the runner, the store and the readers of a run."""

from aieval.core._grader import GRADER_GROUP, GradeInput, Grader, GraderRequest, load_grader
from aieval.core._threshold import ThresholdGrader
from aieval.core._verdict import CriterionValue, GateOutcome, Reason, Verdict

__all__ = [
    "GRADER_GROUP",
    "CriterionValue",
    "GateOutcome",
    "GradeInput",
    "Grader",
    "GraderRequest",
    "Reason",
    "ThresholdGrader",
    "Verdict",
    "load_grader",
]
