"""Per-sample functions for executor tests, importable by Ray workers."""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Iterator
from typing import Any

from aieval.scorers import rouge_l


def rouge(row: dict[str, Any]) -> float:
    """ROUGE-L of a row's prediction against its expected text."""
    return float(rouge_l(row["prediction"], row["expected"]))


async def rouge_async(row: dict[str, Any]) -> float:
    """The same score from an async function."""
    await asyncio.sleep(0)
    return rouge(row)


def fail_on_three(value: int) -> int:
    """Doubles ``value``; raises on 3."""
    if value == 3:
        raise ValueError("three is not allowed")
    return value * 2


def exit_on_three(value: int) -> int:
    """Doubles ``value``; the worker process dies on 3, as a segfaulting scorer would."""
    if value == 3:
        os._exit(1)
    return value * 2


def hang_on_zero(value: int) -> int:
    """Doubles ``value``; never returns (in time) on 0."""
    if value == 0:
        time.sleep(120)
    return value * 2


def sleep_for(seconds: float) -> tuple[float, float]:
    """Sleeps ``seconds``; the wall-clock times it started and ended."""
    started = time.time()
    time.sleep(seconds)
    return started, time.time()


def double(value: int) -> int:
    """Doubles ``value``."""
    return value * 2


def rows(count: int, words: int = 40) -> list[dict[str, Any]]:
    """Deterministic rows with overlapping prediction and expected texts."""
    rng = random.Random(count)
    vocab = [f"w{n}" for n in range(30)]
    out = []
    for i in range(count):
        pred = " ".join(rng.choices(vocab, k=words))
        gold = " ".join(rng.choices(vocab, k=words))
        out.append({"id": str(i), "prediction": pred, "expected": gold})
    return out


class Counted:
    """``range(count)`` as a generator that counts how many items were pulled from it."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.pulled = 0

    def __iter__(self) -> Iterator[int]:
        for i in range(self.count):
            self.pulled += 1
            yield i


def _refuse_to_load() -> None:
    raise ImportError("this function's module is not installed on the workers")


class Unloadable:
    """A callable that pickles but cannot be unpickled, like code missing on a worker node."""

    def __call__(self, value: int) -> int:
        return value

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return (_refuse_to_load, ())


def lock_on_seven(value: int) -> Any:
    """Doubles ``value``; returns a lock (which cannot be pickled) for 7."""
    import threading

    return threading.Lock() if value == 7 else value * 2
