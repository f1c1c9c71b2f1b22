"""Recorded conversations read from a records file (``--replay PATH.jsonl``, ``replay:``).

A records file is one :class:`~aieval.core.Conversation` a line, as ``aieval import deepeval``
writes ``recorded.jsonl`` and :meth:`Conversation.to_json` writes a record. It comes from
others, so it is data: turns and tool results to replay, never a target, endpoint, key or code
(a record has no field that could name one, and a key outside the record's own is refused).
Every line is validated before the run starts, and a problem names the file and the line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aieval._json import loads_strict
from aieval.core import MAX_COUNT, Conversation, count_out_of_range
from aieval.errors import ConfigError, ConversationError

__all__ = ["MAX_RECORDS_BYTES", "is_records_file", "records_from_file"]

#: A records file larger than this is refused before it is read (an import writes at most
#: 50 MB in all).
MAX_RECORDS_BYTES = 100_000_000
#: What names a records file rather than a stored run.
_SUFFIX = ".jsonl"


def is_records_file(replay: str) -> bool:
    """Whether ``replay`` (the value of ``--replay`` or ``replay:``) names a records file: it
    ends in ``.jsonl``. Anything else is a stored run's id or reference."""
    return replay.lower().endswith(_SUFFIX)


def records_from_file(path: str | Path) -> dict[tuple[str, int], Conversation]:
    """The conversations of a records file, keyed by ``(scenario id, epoch)``.

    Raises:
        ConfigError: a missing or oversized file, or a line that is not one valid record (not
            UTF-8, not JSON, a key given twice, a number that is not finite, a field the
            record does not have or of the wrong kind, a token count, retries, cost or latency
            out of range), a scenario and epoch recorded twice,
            or no record at all; the message names the file and the line.
    """
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"replay {str(path)!r}: no such records file")
    size = file.stat().st_size
    if size > MAX_RECORDS_BYTES:
        raise ConfigError(
            f"{file}: {size:,} bytes, more than the {MAX_RECORDS_BYTES:,} a records file may "
            "hold; split the scenarios and replay each part"
        )
    records: dict[tuple[str, int], Conversation] = {}
    lines: dict[tuple[str, int], int] = {}
    with file.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            record = _record(raw, f"{file}, line {number}")
            key = (record.scenario_id, record.epoch)
            if key in lines:
                raise ConfigError(
                    f"{file}, line {number}: scenario {record.scenario_id!r} epoch "
                    f"{record.epoch} is recorded again (first on line {lines[key]}); keep one"
                )
            records[key], lines[key] = record, number
    if not records:
        raise ConfigError(f"{file}: no recorded conversation; a records file holds one a line")
    return records


def _record(raw: bytes, where: str) -> Conversation:
    """One line's record, checked: strict JSON, finite numbers, only the record's own keys."""
    try:
        text = raw.decode("utf-8")
        data = loads_strict(text)
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not UTF-8 text") from None
    except RecursionError:
        raise ConfigError(f"{where}: nested too deep to be a record") from None
    except ValueError as exc:  # JSON syntax, or a key given twice
        raise ConfigError(f"{where}: not a JSON record: {exc}") from None
    try:
        record = Conversation.from_dict(data)
    except ConversationError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    extra = _unknown(data, record.to_dict(), "")
    if extra:
        raise ConfigError(
            f"{where}: {extra}: not a field of a recorded conversation (a record holds turns, "
            "tool results and its outcome, nothing else); remove it"
        )
    wrong = _out_of_range(record)
    if wrong:
        raise ConfigError(f"{where}: {wrong}; correct or remove it")
    return record


def _out_of_range(record: Conversation) -> str | None:
    """The first usage figure of the record that cannot be true: a token count or retries
    negative or above what a store keeps (:data:`~aieval.core.MAX_COUNT`), a cost or latency
    negative; ``None`` if none. An estimate adds the counts up, a run stores them."""
    for number, turn in enumerate(record.turns, 1):
        at = f"scenario {record.scenario_id!r}, turn {number}"
        if turn.latency_s is not None and turn.latency_s < 0:
            return f"{at}.latency_s: {turn.latency_s} is negative"
        usage = turn.usage
        if usage is None:
            continue
        counts = {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "retries": usage.retries,
        }
        for name, value in counts.items():
            if value is not None and count_out_of_range(value):
                return f"{at}.usage.{name}: {value} is out of range (0 to {MAX_COUNT})"
        if usage.cost is not None and usage.cost < 0:
            return f"{at}.usage.cost: {usage.cost} is negative"
    return None


def _unknown(given: Any, known: Any, at: str) -> str | None:
    """The first path in ``given`` (the line's JSON) that the record read from it does not
    have (``known``, its own ``to_dict``), or a number that is not finite; ``None`` if none."""
    if isinstance(given, float) and not math.isfinite(given):
        return at or "a number"
    if isinstance(given, Mapping):
        if not isinstance(known, Mapping):
            return at or "the record"
        for key, value in given.items():
            path = f"{at}.{key}" if at else str(key)
            if key not in known:
                return path
            found = _unknown(value, known[key], path)
            if found:
                return found
    elif isinstance(given, list) and isinstance(known, list):
        for i, (value, mine) in enumerate(zip(given, known, strict=False)):
            found = _unknown(value, mine, f"{at}[{i}]")
            if found:
                return found
    return None
