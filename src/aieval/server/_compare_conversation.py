"""The first regressed turn of one conversation side by side (the compare page's pair view).

Both samples' records are read through :class:`aieval.core.Conversation` (the page gets only
the turn's number, the check, two values and two short texts, which it writes as text); a
record that does not parse, a sample without a verdict or an invalid conversation gives a
note instead of a turn, never a guess.
"""

from __future__ import annotations

from typing import Any

from aieval.conversations import (
    CONVERSATION_KEY,
    FIDELITY_KEY,
    SimulatorFidelity,
    check_values,
    first_regressed_turn,
)
from aieval.core import Conversation, SampleRecord
from aieval.errors import ConfigError, ConversationError

__all__ = ["regressed_turn_view"]


def regressed_turn_view(
    baseline: SampleRecord | None, candidate: SampleRecord | None
) -> dict[str, Any] | None:
    """``{"turn": TurnRegression.to_dict() or None, "note": str | None}`` when both samples
    hold a conversation, else ``None``."""
    if baseline is None or candidate is None:
        return None
    if CONVERSATION_KEY not in baseline.extra or CONVERSATION_KEY not in candidate.extra:
        return None
    try:
        for side, sample in (("baseline", baseline), ("candidate", candidate)):
            stored = sample.extra.get(FIDELITY_KEY)
            if stored is not None and not SimulatorFidelity.from_dict(stored).valid:
                note = f"the {side}'s conversation is invalid (the simulated user failed fidelity)"
                return {"turn": None, "note": note + ": not compared"}
        found = first_regressed_turn(
            Conversation.from_dict(baseline.extra[CONVERSATION_KEY]),
            Conversation.from_dict(candidate.extra[CONVERSATION_KEY]),
            check_values(baseline),
            check_values(candidate),
        )
    except (ConversationError, ConfigError) as exc:
        return {"turn": None, "note": f"not compared: {exc}"}
    return {"turn": None if found is None else found.to_dict(), "note": None}
