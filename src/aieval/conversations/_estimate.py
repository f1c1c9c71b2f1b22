"""What a conversation run will spend, before it spends it: calls and tokens.

Live, each user turn costs one call of the target (plus one per tool round) and, past the
scripted turns, one call of the simulated user: the bounds come from each scenario's
``max_turns``, and tokens are unknown until something was recorded. Replaying, the record
says it: ``strict`` calls the target once per recorded assistant turn (its recorded tokens are
the estimate), ``all`` calls nothing, ``branch`` costs at least what ``strict`` does and at most
a live run from the first changed answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from aieval.conversations._scenario import Scenario
from aieval.core import Conversation

__all__ = ["Estimate", "estimate_calls"]


@dataclass(frozen=True, slots=True)
class Estimate:
    """Expected calls and tokens of a conversation run.

    Attributes:
        conversations: scenarios times epochs.
        target_calls: the target's calls (the least; ``target_calls_max`` the most).
        user_calls_max: the simulated user's calls, at most.
        tokens: tokens the record says the target's calls take (``None``: no record to say).
        mode: ``live``, or the replay mode.
        judge_calls_max: the transcript judges' calls, at most (one per judge and sample for
            each conversation that is played to its end and valid).
    """

    conversations: int
    target_calls: int
    target_calls_max: int
    user_calls_max: int
    tokens: int | None
    mode: str
    judge_calls_max: int = 0

    def lines(self) -> list[str]:
        """The estimate as the command line prints it."""
        calls = (
            f"{self.target_calls}"
            if self.target_calls == self.target_calls_max
            else f"{self.target_calls} to {self.target_calls_max}"
        )
        tokens = "unknown before a run (no record)" if self.tokens is None else f"{self.tokens}"
        return [
            f"{self.conversations} conversations ({self.mode})",
            f"target calls: {calls}",
            f"simulated user calls: at most {self.user_calls_max}",
            f"tokens: {tokens}",
        ] + ([f"judge calls: at most {self.judge_calls_max}"] if self.judge_calls_max else [])


def estimate_calls(
    scenarios: Iterable[Scenario],
    epochs: int,
    *,
    has_user: bool,
    records: Mapping[tuple[str, int], Conversation] | None = None,
    mode: str | None = None,
    judge_calls: int = 0,
) -> Estimate:
    """The estimate of playing ``scenarios`` ``epochs`` times (replaying ``records`` in
    ``mode`` when given), each played conversation judged with ``judge_calls`` calls. A
    scenario without a record fails closed and costs nothing."""
    count = low = high = user = judged = 0
    tokens = 0
    keys = [(s, e) for s in scenarios for e in (range(1, epochs + 1) if epochs > 1 else (0,))]
    for scenario, epoch in keys:
        count += 1
        live_turns = scenario.max_turns
        live_user = 0 if not has_user else max(0, live_turns - len(scenario.user_turns))
        if records is None:
            low += 1
            high += live_turns
            user += live_user
            judged += judge_calls
            continue
        record = records.get((scenario.id, epoch))
        if record is None or mode == "all":
            continue
        judged += judge_calls
        answers = [t for t in record.turns if t.role == "assistant" and t.source != "replayed"]
        low += len(answers)
        tokens += sum(
            (t.usage.input_tokens or 0) + (t.usage.output_tokens or 0)
            for t in answers
            if t.usage is not None
        )
        high += len(answers) if mode == "strict" else max(len(answers), live_turns)
        user += live_user if mode == "branch" else 0
    return Estimate(
        count,
        low,
        max(low, high),
        user,
        tokens if records is not None else None,
        "live" if records is None else f"replay {mode}",
        judged,
    )
