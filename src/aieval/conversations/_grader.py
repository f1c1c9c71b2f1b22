"""The grader of a run of conversations: the threshold grader's verdict, except that a
conversation whose simulated user failed fidelity is *invalid* (a reason of kind
:data:`~aieval.core.INVALID`): it measures the simulator, not the assistant, so it neither
passes nor fails and the run counts it apart, out of the pass rate."""

from __future__ import annotations

from aieval.conversations._fidelity import FIDELITY_KEY, SimulatorFidelity
from aieval.core import INVALID, GradeInput, Reason, ThresholdGrader, Verdict
from aieval.errors import ConversationError

__all__ = ["INVALID_KEY", "ConversationGrader"]

#: the key of an invalid conversation's reason
INVALID_KEY = "simulated user"


class ConversationGrader:
    """:class:`ThresholdGrader` over the checks' scores, with invalid conversations apart."""

    name = "threshold"

    def __init__(self, pass_threshold: float) -> None:
        self.threshold = ThresholdGrader(pass_threshold)

    def grade(self, sample: GradeInput) -> Verdict:
        """The threshold verdict; an invalid one when the conversation did not fail and its
        simulated user failed fidelity (the target's failure stays the target's)."""
        record = sample.record
        verdict = self.threshold.grade(sample)
        data = record.extra.get(FIDELITY_KEY)
        if record.error is not None or data is None:
            return verdict
        try:
            fidelity = SimulatorFidelity.from_dict(data)
        except ConversationError:
            return verdict  # the report names the unreadable record; the checks decide
        if fidelity.valid:
            return verdict
        # no weighted score either: the checks scored the simulator's conversation
        return Verdict(False, (Reason(INVALID, INVALID_KEY, fidelity.reason()),))
