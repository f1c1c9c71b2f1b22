"""Reading a number that was stored or handed over as JSON: a finite float, or nothing."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["finite"]


def finite(value: Any) -> float | None:
    """``value`` as a float when it is a finite number (not a bool), else ``None``.

    >>> finite(3), finite(True), finite(float("nan")), finite("1")
    (3.0, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
