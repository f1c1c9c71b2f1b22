"""Injected tool errors: a chosen share of tool results fails or comes back corrupted.

Which calls are hit is a pure function of the seed, the task, the epoch and the call's place
in the conversation, so two versions of a server (or two models) see errors at the same
places, and a comparison pairs like with like.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from aieval.errors import ConfigError

__all__ = ["ErrorInjection", "InjectionMode", "inject_errors"]

InjectionMode = Literal["fail", "corrupt"]
_MODES = ("fail", "corrupt")
#: what a failed call answers (the tool is not called)
FAILED_TEXT = "the tool is unavailable (injected failure): try again or answer without it"


@dataclass(frozen=True, slots=True)
class ErrorInjection:
    """Fail (``fail``: the tool is not called, the model gets an error) or corrupt
    (``corrupt``: the tool runs and its result is scrambled) a ``rate`` share of the calls of
    ``tools`` (all tools when empty), chosen by ``seed``."""

    rate: float
    mode: InjectionMode = "fail"
    tools: tuple[str, ...] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ConfigError(f"inject_errors rate: expected 0..1, got {self.rate!r}")
        if self.mode not in _MODES:
            raise ConfigError(f"inject_errors mode: {self.mode!r}; expected fail or corrupt")

    def hits(self, tool: str, task: str, epoch: int, call: int) -> bool:
        """Whether the ``call``-th tool call (from 0) of ``task``'s epoch ``epoch`` is hit."""
        if self.tools and tool not in self.tools:
            return False
        key = f"{self.seed}\x00{task}\x00{epoch}\x00{call}".encode()
        draw = int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2**64
        return draw < self.rate

    def to_config(self) -> dict[str, Any]:
        return {"rate": self.rate, "mode": self.mode, "tools": list(self.tools), "seed": self.seed}

    @classmethod
    def from_config(cls, data: Any) -> ErrorInjection:
        if not isinstance(data, dict) or set(data) - {"rate", "mode", "tools", "seed"}:
            raise ConfigError("inject: expected {rate, mode, tools, seed}")
        return inject_errors(**data)


def inject_errors(
    rate: float = 0.2,
    mode: InjectionMode = "fail",
    tools: Sequence[str] = (),
    seed: int = 0,
) -> ErrorInjection:
    """A wrapper of the server's tool results that fails or corrupts ``rate`` of the calls.

    Args:
        rate: the share of calls hit, 0..1.
        mode: ``fail`` (the model is told the tool failed; it is not called) or ``corrupt``
            (the tool runs; its result is scrambled, as a broken backend would send it).
        tools: only calls of these tools may be hit (all when empty).
        seed: which calls are hit (the same seed hits the same places in every run).
    """
    if isinstance(tools, str):
        raise ConfigError("inject_errors tools: expected a list of tool names")
    if isinstance(rate, bool) or not isinstance(rate, int | float):
        raise ConfigError(f"inject_errors rate: expected a number, got {rate!r}")
    return ErrorInjection(float(rate), mode, tuple(tools), int(seed))


def corrupt(text: str) -> str:
    """``text`` scrambled: every character rotated in place, so its shape stays and its content
    is wrong (numbers stay digits, letters letters)."""
    out = []
    for ch in text:
        if ch.isdigit():
            out.append(str((int(ch) + 3) % 10))
        elif "a" <= ch <= "z":
            out.append(chr((ord(ch) - 97 + 13) % 26 + 97))
        elif "A" <= ch <= "Z":
            out.append(chr((ord(ch) - 65 + 13) % 26 + 65))
        else:
            out.append(ch)
    return "".join(out)
