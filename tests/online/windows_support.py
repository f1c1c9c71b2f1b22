"""Online windows as the engine stores them, for the windows and alerts tests: a real run per
window (scored by ``aieval.run``) and its ``online_windows`` row."""

from __future__ import annotations

from typing import Any

from aieval import Store, run
from aieval.online import window_run_name, window_start

HOUR = 3600.0
T0 = window_start(1_780_000_000.0, "hour")


def add_window(
    store: Store, rule: str, start: float, right: list[bool], *, closed: bool = True
) -> str:
    """A window of ``rule`` whose run holds one sample per ``right`` (passing when True)."""
    rows: list[dict[str, Any]] = [
        {"id": f"t{i}", "prompt": "q", "expected": "yes", "prediction": "yes" if ok else "no"}
        for i, ok in enumerate(right)
    ]
    result = run(
        name=window_run_name(rule, start, "hour"),
        dataset=rows,
        scorers=["exact_match", "token_f1"],
        store=store,
    )
    store._write(
        "INSERT INTO online_windows (rule, window_start, window_end, run_id, closed)"
        " VALUES (?, ?, ?, ?, ?)",
        (rule, start, start + HOUR, result.id, int(closed)),
    )
    return result.id
