"""Scorers and targets for runs on Ray workers (importable there by module path)."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from aieval import Example, Score, scorer


@scorer
def explodes_on_boom(prediction: str, expected: str) -> float:
    """1.0; raises on the prediction ``boom``."""
    if prediction == "boom":
        raise ValueError("the scorer blew up")
    return 1.0


@scorer
def dies_on_die(prediction: str, expected: str) -> float:
    """1.0; the worker process dies on the prediction ``die``, as a segfaulting scorer would."""
    if prediction == "die":
        os._exit(1)
    return 1.0


@scorer
def held_match(prediction: str, expected: str, *, example: Example | None = None) -> float:
    """Exact match that first waits (at most 120 s) for the file a row names in ``hold_until``."""
    gate = example.fields.get("hold_until") if example is not None else None
    deadline = time.monotonic() + 120
    while gate and not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.02)
    return float(prediction == expected)


def shout(example: Example) -> str:
    """A callable target: the prompt in capitals."""
    return str(example.prompt).upper()


class Boom(BaseException):
    """A user's own ``BaseException`` subclass: neither an ``Exception`` nor an exit."""


@scorer
def base_on_base(prediction: str, expected: str) -> float:
    """1.0; raises :class:`Boom` on the prediction ``base``."""
    if prediction == "base":
        raise Boom("base")
    return 1.0


@scorer
async def base_on_base_async(prediction: str, expected: str) -> float:
    """1.0; raises :class:`Boom` on the prediction ``abase`` (an async scorer)."""
    if prediction == "abase":
        raise Boom("async base")
    return 1.0


def base_on_three(value: int) -> int:
    """Twice ``value``; raises :class:`Boom` on 3 (an executor's function, not a scorer)."""
    if value == 3:
        raise Boom("three")
    return value * 2


async def generator_exit_on_five(value: int) -> int:
    """Twice ``value``; raises ``GeneratorExit`` on 5."""
    if value == 5:
        raise GeneratorExit("five")
    return value * 2


def echo_or_base(example: Example) -> str:
    """A callable target: the prompt; raises :class:`Boom` on the prompt ``tbase``."""
    if example.prompt == "tbase":
        raise Boom("target base")
    return str(example.prompt)


@scorer
def keeps_a_lock(prediction: str, expected: str) -> Score:
    """Exact match; on the prediction ``lock`` its metadata holds a lock (cannot be pickled)."""
    metadata: dict[str, Any] = {"lock": threading.Lock()} if prediction == "lock" else {}
    return Score(float(prediction == expected), metadata=metadata)


def echo_with(blob: bytes, lock: Any, example: Example) -> str:
    """A callable target bound to data with ``functools.partial``: the prompt as is."""
    return str(example.prompt)
