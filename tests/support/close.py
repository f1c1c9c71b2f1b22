"""Where two report-shaped values differ, for tests that hold a fast path to the record path:
floats within a relative 1e-9 (1e-12 absolute near 0), everything else exactly, type included."""

from __future__ import annotations

import math
from typing import Any


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Each place ``a`` and ``b`` differ, as ``path: a != b`` (empty when they agree)."""
    if isinstance(a, float) and isinstance(b, float | int) and not isinstance(b, bool):
        ok = math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return [] if ok else [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{where}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in differences(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)}"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, f"{where}[{i}]")
        ]
    return [] if a == b and type(a) is type(b) else [f"{where}: {a!r} != {b!r}"]
