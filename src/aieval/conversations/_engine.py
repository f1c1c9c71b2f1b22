"""The conversation engine: scripted user turns, then the simulated user, against the target,
with the scenario's tools, until a stop rule; or a replay of a recorded conversation.

One conversation's failure (the target, the simulated user, a replay miss) ends that
conversation, recorded with its message and type; it never breaks the others.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, NoReturn

from aieval.conversations._environment import Environment
from aieval.conversations._scenario import Scenario
from aieval.conversations._target import ConversationTarget, TargetFunction, as_target
from aieval.conversations._tools import Tool, ToolBox, takes_environment
from aieval.conversations._user import SimulatedUser
from aieval.core import Conversation, ConversationOutcome, StopReason, ToolCall, Turn, TurnSource
from aieval.errors import ConfigError, ReplayMissError

__all__ = ["GoalCheck", "Replay", "ReplayMode", "run_conversation", "run_conversations"]

#: ``strict``: the record's user turns and tool results, the target live; ``all``: every turn
#: from the record (no call at all); ``branch``: as strict until the target's answer differs
#: from the record, then live from there
ReplayMode = Literal["strict", "all", "branch"]
_MODES = ("strict", "all", "branch")
#: the author's goal check: given the scenario and the turns so far, whether the goal is reached
GoalCheck = Callable[[Scenario, tuple[Turn, ...]], "bool | Awaitable[bool]"]
#: how many times in a row the target may ask for tools before it must answer
DEFAULT_MAX_TOOL_ROUNDS = 8


@dataclass(frozen=True, slots=True)
class Replay:
    """Replay ``record`` (a conversation of the same scenario) in ``mode``."""

    record: Conversation
    mode: ReplayMode = "strict"

    def __post_init__(self) -> None:
        if self.mode not in _MODES:
            raise ConfigError(f"replay mode {self.mode!r}: expected one of {', '.join(_MODES)}")


class _Stop(Exception):
    """Ends the conversation with a stop rule."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason = reason


class _Session:
    """One conversation in progress."""

    def __init__(
        self,
        scenario: Scenario,
        target: ConversationTarget | None,
        user: SimulatedUser | None,
        toolbox: ToolBox,
        goal_check: GoalCheck | None,
        replay: Replay | None,
        max_tool_rounds: int,
    ) -> None:
        self.scenario, self.target, self.user = scenario, target, user
        self.toolbox, self.goal_check, self.max_tool_rounds = toolbox, goal_check, max_tool_rounds
        self.replay = replay
        self.replaying = replay is not None  # off after a branch
        self.turns: list[Turn] = [
            Turn(m.role, m.content, "scripted")  # type: ignore[arg-type]  # user or assistant
            for m in scenario.initial_messages
        ]
        self.user_turns = 0
        self.branched_at: int | None = None

    @property
    def record(self) -> Conversation:
        assert self.replay is not None
        return self.replay.record

    def miss(self, reason: str, position: int | None = None) -> ReplayMissError:
        turn = (len(self.turns) if position is None else position) + 1
        return ReplayMissError(self.scenario.id, turn, reason, mode=self.mode)

    def recorded(self, position: int) -> Turn | None:
        turns = self.record.turns
        return turns[position] if position < len(turns) else None

    async def run(self) -> NoReturn:
        """Play until a stop rule or a failure ends it (by raising)."""
        if self.replaying:
            self.check_opening()
        if self.turns and self.turns[-1].role == "user":
            await self.target_move()
        while True:
            if self.user_turns >= self.scenario.max_turns:
                raise _Stop("script_end" if self.nothing_more() else "max_turns")
            await self.user_move()
            await self.target_move()

    def check_opening(self) -> None:
        """The record must start with the scenario's initial messages."""
        for position, turn in enumerate(self.turns):
            recorded = self.recorded(position)
            if recorded is None or (recorded.role, recorded.content) != (turn.role, turn.content):
                held = "nothing" if recorded is None else f"{recorded.role} {recorded.content!r}"
                raise self.miss(
                    f"the scenario's initial message is {turn.role} {turn.content!r}, the "
                    f"record holds {held}: the record no longer matches the scenario",
                    position,
                )

    def nothing_more(self) -> bool:
        """Whether no user turn would come anyway (the script is over and nobody simulates)."""
        if self.replaying:
            return (
                len(self.turns) >= len(self.record.turns)
                and self.record.outcome.stop_reason == "script_end"
            )
        return self.user is None and self.user_turns >= len(self.scenario.user_turns)

    async def user_move(self) -> None:
        turn, stop = await (self.replayed_user() if self.replaying else self.live_user())
        if turn is not None:
            self.turns.append(turn)
            self.user_turns += 1
        if stop is not None:
            raise _Stop(stop)

    async def replayed_user(self) -> tuple[Turn | None, StopReason | None]:
        position = len(self.turns)
        recorded = self.recorded(position)
        ended = self.record.outcome.stop_reason
        self.check_scripted(recorded)
        if recorded is None:
            if ended == "script_end":
                return None, ended
            # a record that ended by user_done ends with the user's closing turn (replayed
            # above as the last): one without it was cut, and its end is not the user's
            raise self.miss(f"the record holds no user turn here (it ended by {ended})")
        if recorded.role != "user":
            raise self.miss(f"the record holds a {recorded.role} turn here, not a user turn")
        last = position == len(self.record.turns) - 1
        return Turn(
            "user", recorded.content, "replayed"
        ), "user_done" if last and ended == "user_done" else None

    def check_scripted(self, recorded: Turn | None) -> None:
        """A scripted turn of the scenario must be the record's user turn at its place: a
        changed script is a changed scenario, never played from the old record."""
        script = self.scenario.user_turns
        if self.user_turns >= len(script):
            return
        said = script[self.user_turns]
        if recorded is not None and recorded.role == "user" and recorded.content == said:
            return
        held = (
            "nothing"
            if recorded is None
            else f"{recorded.content!r}"
            if recorded.role == "user"
            else f"a {recorded.role} turn"
        )
        raise self.miss(
            f"the scenario's scripted user turn is {said!r}, the record holds {held}: the "
            "record no longer matches the scenario"
        )

    async def live_user(self) -> tuple[Turn | None, StopReason | None]:
        script = self.scenario.user_turns
        if self.user_turns < len(script):
            return Turn("user", script[self.user_turns], "scripted"), None
        if self.user is None:
            return None, "script_end"
        try:
            reply = await self.user.reply(self.scenario, tuple(self.turns))
        except Exception as exc:
            raise _Failure(f"the simulated user failed: {type(exc).__name__}: {exc}", exc) from exc
        turn = Turn(
            "user", reply.content, "simulated", usage=reply.usage, latency_s=reply.latency_s
        )
        if reply.done and self.scenario.stop.user_done:
            # kept even when empty (only the done marker): the record ends with the user's turn
            return turn, "user_done"
        return turn, None

    async def target_move(self) -> None:
        for _ in range(self.max_tool_rounds + 1):
            answer = await (
                self.replayed_answer()
                if self.replaying and self.mode == "all"
                else self.live_answer()
            )
            if not answer.tool_calls:
                await self.check_goal()
                return
        raise _Failure(
            f"the target asked for tools {self.max_tool_rounds + 1} times in a row without "
            "answering (max_tool_rounds)",
            None,
        )

    @property
    def mode(self) -> ReplayMode | None:
        return None if self.replay is None else self.replay.mode

    async def replayed_answer(self) -> Turn:
        """The record's assistant turn and its tool turns, as they were (``all`` mode)."""
        recorded = self.recorded(len(self.turns))
        if recorded is None or recorded.role != "assistant":
            held = "nothing" if recorded is None else f"a {recorded.role} turn"
            raise self.miss(f"the record holds {held} here, not the target's answer")
        turn = replace(recorded, source="replayed", usage=None, latency_s=None)
        self.turns.append(turn)
        for call in recorded.tool_calls:
            result = self.recorded(len(self.turns))
            if result is None or result.role != "tool" or result.tool_call_id != call.id:
                raise self.miss(f"the record holds no result of tool call {_named(call)} here")
            self.turns.append(replace(result, source="replayed", usage=None, latency_s=None))
        return turn

    async def live_answer(self) -> Turn:
        assert self.target is not None
        position = len(self.turns)
        if self.replaying:
            # a replay that runs past the record (or off its roles) is a miss, never a live
            # call nor a branch: the record lacks the turn, the answer did not change
            recorded = self.recorded(position)
            if recorded is None or recorded.role != "assistant":
                held = "nothing" if recorded is None else f"a {recorded.role} turn"
                raise self.miss(
                    f"the record holds {held} here, not the target's answer (it ends at turn "
                    f"{len(self.record.turns)}, by {self.record.outcome.stop_reason})"
                )
        try:
            reply = await self.target.respond(tuple(self.turns), self.toolbox.specs())
        except Exception as exc:
            raise _Failure(f"the target failed: {type(exc).__name__}: {exc}", exc) from exc
        if (
            self.replaying
            and self.mode == "branch"
            and not _same(reply.content, reply.tool_calls, self.recorded(position))
        ):
            self.replaying = False
            self.branched_at = position + 1
        calls: list[tuple[ToolCall, TurnSource]] = []

        def played() -> Turn:
            # the answer as asked (a call the replay could not answer keeps no result), then
            # the tool turns answered so far: a miss keeps the record up to the turn it names
            answered = tuple(call for call, _ in calls)
            turn = Turn(
                "assistant",
                reply.content,
                "live",
                answered + tuple(reply.tool_calls[len(answered) :]),
                None,
                reply.usage,
                reply.latency_s,
            )
            self.turns.append(turn)
            for call, source in calls:
                self.turns.append(Turn("tool", call.result or "", source, tool_call_id=call.id))
            return turn

        try:
            for index, call in enumerate(reply.tool_calls):
                calls.append(await self.tool_result(call, index, position))
        except ReplayMissError:
            played()
            raise
        return played()

    async def tool_result(
        self, call: ToolCall, index: int, position: int
    ) -> tuple[ToolCall, TurnSource]:
        """The call's result: run now, or (replaying) the record's, which must hold the same
        call (name and arguments) at this place and the tool turn answering it."""
        if not self.replaying:
            return await self.toolbox.run(call)
        recorded = self.recorded(position)
        held = recorded.tool_calls if recorded is not None and recorded.role == "assistant" else ()
        answer = self.recorded(position + 1 + index)
        if (
            index < len(held)
            and (held[index].name, held[index].arguments) == (call.name, call.arguments)
            and answer is not None
            and answer.role == "tool"
            and answer.tool_call_id == held[index].id
        ):
            return replace(call, result=held[index].result, error=held[index].error), "replayed"
        # the miss is the tool turn this call's result would fill
        raise self.miss(
            f"the record holds no result of tool call {_named(call)} here",
            position + 1 + index,
        )

    async def check_goal(self) -> None:
        if self.goal_check is None:
            return
        try:
            reached = self.goal_check(self.scenario, tuple(self.turns))
            if inspect.isawaitable(reached):
                reached = await reached
        except Exception as exc:  # the author's check: this conversation fails, not the run
            raise _Failure(f"the goal check failed: {type(exc).__name__}: {exc}", exc) from exc
        if reached:
            raise _Stop("goal_reached")


class _Failure(Exception):
    """Ends the conversation as failed; ``cause`` names the failure's type."""

    def __init__(self, message: str, cause: BaseException | None) -> None:
        super().__init__(message)
        self.cause = cause


def _named(call: ToolCall) -> str:
    """A tool call as the author reads it: ``issue_refund({"order_id": 2001})``."""
    return f"{call.name}({call.arguments})"


def _same(content: str, calls: Sequence[ToolCall], recorded: Turn | None) -> bool:
    """Whether an answer says what the recorded turn said (tool-call ids aside: a live model
    makes new ones)."""
    if recorded is None or recorded.role != "assistant" or recorded.content != content:
        return False
    return [(c.name, c.arguments) for c in calls] == [
        (c.name, c.arguments) for c in recorded.tool_calls
    ]


async def run_conversation(
    scenario: Scenario,
    target: ConversationTarget | TargetFunction | None = None,
    *,
    user: SimulatedUser | None = None,
    tools: Sequence[Tool] = (),
    goal_checks: Mapping[str, GoalCheck] | None = None,
    replay: Replay | None = None,
    epoch: int = 0,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
    environment: Environment | None = None,
) -> Conversation:
    """Run one scenario's conversation (or replay its record) and return it.

    Args:
        scenario: the validated scenario.
        target: a :class:`ChatTarget`, an object with ``respond``, or a function of the turns
            so far; not needed to replay in ``all`` mode.
        user: the simulated user, after the scripted turns (``None``: the script alone).
        tools: the author's Python tools (a row's recorded results answer first).
        goal_checks: the author's goal checks by name (the row's ``stop.goal_check`` picks one).
        replay: replay a recorded conversation instead of asking the user (and, in ``all``
            mode, the target).
        epoch: which repetition this is.
        max_tool_rounds: how many times in a row the target may ask for tools.
        environment: the state this conversation's tools share (a fresh one per
            conversation); tools with an ``environment`` parameter are given it. Its
            :meth:`~Environment.snapshot` afterwards is the conversation's final state.

    A failure (the target, the simulated user, a replay miss) does not raise: the conversation
    ends with ``outcome.stop_reason == "failed"`` and the failure's message and type.
    """
    session = _session(
        scenario, target, user, tools, goal_checks, replay, max_tool_rounds, environment
    )
    outcome: ConversationOutcome
    try:
        await session.run()
    except _Stop as stop:
        completed = stop.reason in ("user_done", "script_end", "goal_reached")
        outcome = ConversationOutcome(stop.reason, completed)
    except ReplayMissError as exc:
        outcome = ConversationOutcome("failed", False, str(exc), type(exc).__name__)
    except _Failure as exc:
        kind = type(exc.cause).__name__ if exc.cause is not None else "ConversationError"
        outcome = ConversationOutcome("failed", False, str(exc), kind)
    return Conversation(scenario.id, epoch, tuple(session.turns), outcome, session.branched_at)


def _session(
    scenario: Scenario,
    target: ConversationTarget | TargetFunction | None,
    user: SimulatedUser | None,
    tools: Sequence[Tool],
    goal_checks: Mapping[str, GoalCheck] | None,
    replay: Replay | None,
    max_tool_rounds: int,
    environment: Environment | None = None,
) -> _Session:
    """Check what the author gave (a :class:`ConfigError` names what is missing)."""
    if replay is not None and replay.record.scenario_id != scenario.id:
        raise ConfigError(
            f"replay: the record is of scenario {replay.record.scenario_id!r}, not {scenario.id!r}"
        )
    if target is None and (replay is None or replay.mode != "all"):
        raise ConfigError(
            f"scenario {scenario.id!r}: give a target (only replay mode 'all' runs without one)"
        )
    goal_check = None
    name = scenario.stop.goal_check
    if name is not None:
        goal_check = (goal_checks or {}).get(name)
        if goal_check is None:
            raise ConfigError(
                f"scenario {scenario.id!r}: stop.goal_check {name!r} is not among goal_checks="
            )
    if max_tool_rounds < 0:
        raise ConfigError(f"max_tool_rounds must be >= 0, got {max_tool_rounds}")
    if environment is None:
        needing = [t.name for t in tools if takes_environment(t.function)]
        if needing:
            raise ConfigError(
                f"tools {', '.join(map(repr, needing))} take the conversation's environment: "
                "give environment= (conversation.environment in an eval file)"
            )
    return _Session(
        scenario,
        None if target is None else as_target(target),
        user,
        ToolBox(scenario, tools, environment),
        goal_check,
        replay,
        max_tool_rounds,
    )


async def run_conversations(
    scenarios: Sequence[Scenario],
    target: ConversationTarget | TargetFunction | None = None,
    *,
    user: SimulatedUser | None = None,
    tools: Sequence[Tool] = (),
    goal_checks: Mapping[str, GoalCheck] | None = None,
    records: Sequence[Conversation] | None = None,
    mode: ReplayMode = "strict",
    epoch: int = 0,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
) -> list[Conversation]:
    """Run (or, given ``records``, replay) each scenario in turn, as :func:`run_conversation`.

    Replaying, each scenario takes its record by scenario id and epoch; a scenario without one
    fails closed (a replay miss at turn 1), and nothing is asked live in its place.
    """
    by_key = {(r.scenario_id, r.epoch): r for r in records or ()}
    results = []
    for scenario in scenarios:
        replay = None
        if records is not None:
            record = by_key.get((scenario.id, epoch))
            if record is None:
                miss = ReplayMissError(
                    scenario.id, 1, f"no recorded conversation of epoch {epoch}", mode=mode
                )
                outcome = ConversationOutcome("failed", False, str(miss), type(miss).__name__)
                results.append(Conversation(scenario.id, epoch, (), outcome))
                continue
            replay = Replay(record, mode)
        conversation = await run_conversation(
            scenario,
            target,
            user=user,
            tools=tools,
            goal_checks=goal_checks,
            replay=replay,
            epoch=epoch,
            max_tool_rounds=max_tool_rounds,
        )
        results.append(conversation)
    return results
