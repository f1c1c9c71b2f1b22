"""A conversation sample's record as the sample page shows it: validated, never trusted.

The record in a sample's ``extra`` came from a run (or an upload): it is read through
:class:`aieval.core.Conversation` and :class:`aieval.conversations.SimulatorFidelity`, so the
page gets only their fields, and a malformed record becomes an error naming the bad field
instead of a broken page. The page writes every text as text (never as HTML).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aieval.conversations import CONVERSATION_KEY, FIDELITY_KEY, SimulatorFidelity
from aieval.core import Conversation
from aieval.errors import ConversationError

__all__ = ["conversation_view"]


def conversation_view(extra: Mapping[str, Any]) -> dict[str, Any] | None:
    """The sample's conversation (``Conversation.to_dict()`` with its ``fidelity``: ``None``
    when the run did not check it), ``{"error": ...}`` when malformed, ``None`` when absent."""
    data = extra.get(CONVERSATION_KEY)
    if data is None:
        return None
    try:
        record = Conversation.from_dict(data)
        stored = extra.get(FIDELITY_KEY)
        fidelity = None if stored is None else SimulatorFidelity.from_dict(stored)
    except ConversationError as exc:
        return {"error": f"the stored conversation is malformed: {exc}"}
    return {**record.to_dict(), "fidelity": None if fidelity is None else fidelity.to_dict()}
