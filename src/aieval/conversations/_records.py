"""Recorded conversations read back from a stored run or a records file, by scenario id and
epoch."""

from __future__ import annotations

from typing import Any

from aieval.conversations._records_file import is_records_file, records_from_file
from aieval.core import Conversation
from aieval.errors import ConfigError, ConversationError
from aieval.scorers.state import FINAL_STATE_KEY
from aieval.store import Store

__all__ = [
    "CONVERSATION_KEY",
    "replay_records",
    "replay_source",
    "replayed_states",
    "stored_conversations",
]

#: The ``extra`` key a conversation sample stores its record under.
CONVERSATION_KEY = "conversation"


def replay_records(store: Any, replay: str) -> dict[tuple[str, int], Conversation]:
    """The conversations a replay plays, keyed by ``(scenario id, epoch)``: from the records
    file ``replay`` names (``*.jsonl``), else from the stored run it names."""
    if is_records_file(replay):
        return records_from_file(replay)
    return stored_conversations(store, replay)


def replayed_states(store: Any, replay: str) -> dict[tuple[str, int], Any]:
    """The environment snapshots a replayed run stored (``extra["final_state"]``), keyed as
    :func:`replay_records`; a records file holds none."""
    if is_records_file(replay) or store is None or store is False:
        return {}
    owned = not isinstance(store, Store)
    db = Store() if store is True else store if isinstance(store, Store) else Store(store)
    states: dict[tuple[str, int], Any] = {}
    try:
        for sample in db.iter_samples(db.get_run(replay).id, texts=False):
            data = sample.extra.get(CONVERSATION_KEY)
            if isinstance(data, dict) and FINAL_STATE_KEY in sample.extra:
                key = (str(data.get("scenario_id")), int(data.get("epoch") or 0))
                states[key] = sample.extra[FINAL_STATE_KEY]
    finally:
        if owned:
            db.close()
    return states


def replay_source(replay: str) -> str:
    """What a replay reads, for messages: ``records file 'x.jsonl'`` or ``run abc``."""
    return f"records file {replay!r}" if is_records_file(replay) else f"run {replay}"


def stored_conversations(store: Any, run: str) -> dict[tuple[str, int], Conversation]:
    """The conversations stored by run ``run`` (an id, or a reference the store resolves),
    keyed by ``(scenario id, epoch)``.

    Raises:
        ConfigError: no store, no such run, or a run that stored no conversation.
    """
    if store is None or store is False:
        raise ConfigError(f"replay {run!r}: a replay reads a stored run; this run has no store")
    owned = not isinstance(store, Store)
    db = Store() if store is True else store if isinstance(store, Store) else Store(store)
    try:
        found = db.get_run(run)
        records: dict[tuple[str, int], Conversation] = {}
        for sample in db.iter_samples(found.id, texts=False):
            data = sample.extra.get(CONVERSATION_KEY)
            if data is None:
                continue
            try:
                record = Conversation.from_dict(data)
            except ConversationError as exc:
                raise ConfigError(f"replay {run!r}: sample {sample.id!r}: {exc}") from None
            records[(record.scenario_id, record.epoch)] = record
    finally:
        if owned:
            db.close()
    if not records:
        raise ConfigError(
            f"replay {run!r}: run {found.id} stored no conversation; replay a run of the "
            "conversation evaluator"
        )
    return records
