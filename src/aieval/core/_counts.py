"""The range of the counts a run stores: token counts and retries.

SQLite and PostgreSQL keep integers as signed 64-bit, so a count above ``2**63 - 1`` cannot be
stored; a negative one means nothing. A dataset row's count out of range is refused at load
(see :mod:`aieval.datasets`); one that reaches a sample at run time (a provider's reply, a
target's own usage) becomes that sample's recorded error, never a failed run.
"""

from __future__ import annotations

from aieval.core._records import SampleRecord

__all__ = ["MAX_COUNT", "count_out_of_range", "drop_unstorable_counts"]

#: The largest count a store keeps (its integers are signed 64-bit).
MAX_COUNT = 2**63 - 1


def count_out_of_range(value: int) -> bool:
    """Whether ``value`` cannot be stored as a count (negative, or above :data:`MAX_COUNT`).

    >>> count_out_of_range(2**64), count_out_of_range(12)
    (True, False)
    """
    return not 0 <= value <= MAX_COUNT


def drop_unstorable_counts(record: SampleRecord) -> list[str]:
    """Clear the record's counts out of range (tokens become unknown, retries 0), in place.

    Returns one line per count cleared, naming its field and value, for the sample's error.
    """
    problems: list[str] = []

    def check(value: int | None, where: str) -> bool:
        if value is None or not count_out_of_range(value):
            return False
        problems.append(f"{where} {value} is out of range (0 to {MAX_COUNT})")
        return True

    for n, call in enumerate(record.calls, 1):
        where = f"model call {n} ({call.purpose})"
        if check(call.input_tokens, f"{where} input_tokens"):
            call.input_tokens = None
        if check(call.output_tokens, f"{where} output_tokens"):
            call.output_tokens = None
        if check(call.retries, f"{where} retries"):
            call.retries = 0
    if check(record.input_tokens, "the sample's input_tokens"):
        record.input_tokens = None
    if check(record.output_tokens, "the sample's output_tokens"):
        record.output_tokens = None
    if check(record.retries, "the sample's retries"):
        record.retries = 0
    return problems
