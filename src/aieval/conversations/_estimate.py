"""What a conversation run will spend, before it spends it: calls and tokens.

Live, each target move (one per user turn, and one first when the opening ends with a user
message) costs one call of the target (the least counts the scripted user turns, which are all
answered unless a goal check ends the conversation first), plus one per tool round when the
scenario can call tools (at most ``max_tool_rounds`` rounds a move: the most counts them all),
and, past the scripted turns, one call of the simulated user: the bounds come from each
scenario's ``max_turns``, and tokens are unknown until something was recorded. Replaying, the
record says it: ``strict`` calls the target once for each assistant turn the record holds past
the scenario's opening, whatever the record's own source (a record that was itself replayed is
called again; a scripted opening never is), and its recorded tokens are the estimate (those
answers whose usage the record does not hold are counted apart, each with why: the record was
itself replayed, its target reported no usage, or the records file holds none); ``all`` calls
nothing; ``branch`` costs at least what ``strict`` does and at most a live run from the first
changed answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from aieval.conversations._scenario import Scenario
from aieval.core import Conversation

__all__ = ["Estimate", "estimate_calls"]

#: How many conversations without a record the estimate names (the count holds them all).
_NAMED = 5

#: Why a recorded answer carries no token counts, by what the estimate knows of it: its turn
#: was replayed, or live from a stored run whose target reported no usage (a Python target, a
#: provider that sends none), or live in a records file that holds none (an import).
_WHY = {
    "replayed": "from a record that was itself replayed",
    "live": "whose target reported no usage (a Python target, or a provider that sends none)",
    "file": "that the records file holds without usage (an import without it)",
}


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
        tool_rounds: the tool rounds per target move ``target_calls_max`` counts (the run's
            ``max_tool_rounds``; 0 when no scenario can call a tool).
        tokens_unrecorded: the replayed answers whose tokens the record does not hold:
            ``tokens`` is then a lower bound.
        unrecorded_why: those answers by why, ``(count, why)``, in the order of
            ``_WHY``.
        missing: the conversations (``scenario`` or ``scenario#epoch``) the records lack:
            each fails closed when replayed, and the estimate says so beforehand.
    """

    conversations: int
    target_calls: int
    target_calls_max: int
    user_calls_max: int
    tokens: int | None
    mode: str
    judge_calls_max: int = 0
    tool_rounds: int = 0
    tokens_unrecorded: int = 0
    unrecorded_why: tuple[tuple[int, str], ...] = ()
    missing: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """The estimate as the command line prints it."""
        calls = (
            f"{self.target_calls}"
            if self.target_calls == self.target_calls_max
            else f"{self.target_calls} to {self.target_calls_max}"
        )
        if self.tool_rounds:
            calls += (
                f" (the most counts up to {self.tool_rounds} tool rounds per answer, "
                "max_tool_rounds)"
            )
        if self.tokens is None:
            tokens = "unknown before a run (no record)"
        elif self.tokens_unrecorded:
            why = "; ".join(f"{n} {text}" for n, text in self.unrecorded_why)
            tokens = (
                f"at least {self.tokens} ({self.tokens_unrecorded} recorded answers carry no "
                f"token counts: {why})"
            )
        else:
            tokens = f"{self.tokens}"
        return (
            [
                f"{self.conversations} conversations ({self.mode})",
                f"target calls: {calls}",
                f"simulated user calls: at most {self.user_calls_max}",
                f"tokens: {tokens}",
            ]
            + ([f"judge calls: at most {self.judge_calls_max}"] if self.judge_calls_max else [])
            + ([self._missing_line()] if self.missing else [])
        )

    def _missing_line(self) -> str:
        shown = ", ".join(repr(m) for m in self.missing[:_NAMED])
        more = f" and {len(self.missing) - _NAMED} more" if len(self.missing) > _NAMED else ""
        return (
            f"warning: {len(self.missing)} conversation{'' if len(self.missing) == 1 else 's'}"
            f" without a record ({shown}{more}): each fails closed (ReplayMissError), nothing"
            " is called in its place"
        )


def estimate_calls(
    scenarios: Iterable[Scenario],
    epochs: int,
    *,
    has_user: bool,
    records: Mapping[tuple[str, int], Conversation] | None = None,
    mode: str | None = None,
    judge_calls: int = 0,
    max_tool_rounds: int = 0,
    shared_tools: bool = False,
    from_file: bool = False,
) -> Estimate:
    """The estimate of playing ``scenarios`` ``epochs`` times (replaying ``records`` in
    ``mode`` when given), each played conversation judged with ``judge_calls`` calls; a
    scenario that declares tools (or every scenario, ``shared_tools``: the eval's Python
    tools) may take ``max_tool_rounds`` tool rounds per target move. A scenario without a
    record fails closed and costs nothing. ``from_file``: the records came from a records file
    (an import, say), not a stored run; it only says why an answer carries no tokens."""
    count = low = high = user = judged = 0
    why: dict[str, int] = dict.fromkeys(_WHY.values(), 0)
    missing: list[str] = []
    tokens = 0
    rounds_counted = 0
    keys = [(s, e) for s in scenarios for e in (range(1, epochs + 1) if epochs > 1 else (0,))]
    for scenario, epoch in keys:
        count += 1
        rounds = max_tool_rounds if shared_tools or scenario.tools else 0
        rounds_counted = max(rounds_counted, rounds)
        opening = scenario.initial_messages
        # the target answers an opening that ends with the user before the first user turn
        moves = scenario.max_turns + (1 if opening and opening[-1].role == "user" else 0)
        live_high = moves * (rounds + 1)
        live_user = 0 if not has_user else max(0, scenario.max_turns - len(scenario.user_turns))
        if records is None:
            # without a goal check to end it early, every scripted user turn is answered
            scripted = (
                min(len(scenario.user_turns), scenario.max_turns) + moves - scenario.max_turns
            )
            low += 1 if scenario.stop.goal_check is not None else max(1, scripted)
            high += live_high
            user += live_user
            judged += judge_calls
            continue
        record = records.get((scenario.id, epoch))
        if record is None:
            missing.append(f"{scenario.id}#{epoch}" if epoch else scenario.id)
            continue
        if mode == "all":
            continue
        judged += judge_calls
        # every assistant turn past the opening is a call of the target now, whichever way
        # the record itself came by it (live, or replayed from an earlier record)
        answers = [t for t in record.turns[len(opening) :] if t.role == "assistant"]
        low += len(answers)
        tokens += sum(
            (t.usage.input_tokens or 0) + (t.usage.output_tokens or 0)
            for t in answers
            if t.usage is not None
        )
        for turn in answers:
            if turn.usage is None:
                key = "replayed" if turn.source == "replayed" else "file" if from_file else "live"
                why[_WHY[key]] += 1
        high += len(answers) if mode == "strict" else max(len(answers), live_high)
        user += live_user if mode == "branch" else 0
    counted_rounds = rounds_counted if records is None or mode == "branch" else 0
    return Estimate(
        count,
        low,
        max(low, high),
        user,
        tokens if records is not None else None,
        "live" if records is None else f"replay {mode}",
        judged,
        counted_rounds,
        sum(why.values()),
        tuple((n, text) for text, n in why.items() if n),
        tuple(missing),
    )
