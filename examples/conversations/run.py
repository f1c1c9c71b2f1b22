"""Run the example conversations offline, record them, then replay the record.

    python examples/conversations/run.py            # writes conversations.jsonl beside it
    python examples/conversations/run.py --out DIR  # or into DIR

It plays every scenario (scripted turns, then the simulated user), keeps each conversation as
one JSON line, replays the record with zero calls (``all``), and replays it in ``branch`` mode
against a changed assistant to show where the new version first answers otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from aieval.conversations import (
    SimulatedUser,
    TargetReply,
    ToolSpec,
    load_scenarios,
    run_conversations,
)
from aieval.core import Conversation, Turn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import support  # noqa: E402  (the author's code beside this script)


def changed_bot(turns: Sequence[Turn], tools: Sequence[ToolSpec]) -> TargetReply | str:
    """A new version of the assistant that answers Monday's hours otherwise."""
    if turns[-1].role == "user" and "monday" in turns[-1].content.lower():
        return "On Monday we are closed."
    return support.support_bot(turns, tools)


async def main(out: Path) -> None:
    scenarios = load_scenarios(
        HERE / "scenarios.yaml", checks=support.CHECKS, goal_checks=support.GOAL_CHECKS
    )
    print(f"{len(scenarios)} scenarios, version {scenarios.version}")
    user = SimulatedUser(support.ScriptedUserModel(), "scripted-user", seed=7)
    options = {"tools": support.TOOLS, "goal_checks": support.GOAL_CHECKS}
    live = await run_conversations(list(scenarios), support.support_bot, user=user, **options)
    out.mkdir(parents=True, exist_ok=True)
    record = out / "conversations.jsonl"
    record.write_text("".join(c.to_json() + "\n" for c in live), encoding="utf-8")
    for conversation in live:
        outcome = conversation.outcome
        print(f"{conversation.scenario_id}: {len(conversation.turns)} turns, {outcome.stop_reason}")
    recorded = [Conversation.from_json(line) for line in record.read_text().splitlines()]
    again = await run_conversations(list(scenarios), records=recorded, mode="all", **options)
    same = sum(a.transcript() == r.transcript() for a, r in zip(again, recorded, strict=True))
    print(f"replay all: {same}/{len(recorded)} transcripts identical, no call made")
    branched = await run_conversations(
        list(scenarios), changed_bot, user=user, records=recorded, mode="branch", **options
    )
    for conversation in branched:
        if conversation.branched_at is not None:
            turn = conversation.turns[conversation.branched_at - 1]
            print(
                f"branch: {conversation.scenario_id} differs at turn "
                f"{conversation.branched_at}: {turn.content!r}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    asyncio.run(main(parser.parse_args().out))
