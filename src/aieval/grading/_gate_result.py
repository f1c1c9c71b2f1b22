"""The result of one hard gate (layer 0)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["GateResult"]


@dataclass(slots=True, frozen=True)
class GateResult:
    """One named pass/fail check.

    Attributes:
        name: the gate's name, e.g. ``required_outputs_present``.
        passed: whether the gate passed.
        reason: why it failed (or a short confirmation when it passed).
        evidence: structured detail behind the verdict (missing fields, failing paths, ...).
    """

    name: str
    passed: bool
    reason: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
