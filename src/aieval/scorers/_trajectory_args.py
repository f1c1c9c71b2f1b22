"""How a made call's arguments are compared with an expected call's: argument modes and
normalizers.

Argument modes (agentevals' names): ``exact`` (equal), ``ignore`` (not compared), ``subset``
(every argument the agent gave is expected, with the same value), ``superset`` (every expected
argument was given, with the same value; more are fine).

Normalizers make two values equal that differ only in form. A row may name the built-ins
(:data:`NORMALIZERS`, or ``{"number": TOLERANCE}``); only the eval author (Python) may give a
callable, which maps each value (every string, number, boolean or null inside the arguments)
to the value compared.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aieval.errors import ConfigError

__all__ = ["ARGUMENT_MODES", "NORMALIZERS", "ArgumentRule", "arguments_rule"]

#: how arguments are compared
ARGUMENT_MODES = ("exact", "ignore", "subset", "superset")

#: the built-in normalizers a row or an eval file may name
NORMALIZERS = ("case", "whitespace", "path", "timestamp", "number")

_ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?"
)
_SPACE = re.compile(r"\s+")

#: a callable normalizer: one value to the value compared
Normalizer = Callable[[Any], Any]
#: an eval author's own comparison: ``(called_arguments, expected_arguments) -> bool``
Matcher = Callable[[Any, Any], bool]


@dataclass(frozen=True, slots=True)
class ArgumentRule:
    """How one tool's arguments are compared: the mode, the value transforms in order, the
    tolerance for numbers (``None``: numbers are not normalized), or the author's matcher."""

    mode: str = "exact"
    transforms: tuple[Normalizer, ...] = ()
    tolerance: float | None = None
    matcher: Matcher | None = None

    def compare(self, called: Any, expected: Any, *, error: str | None) -> bool | None:
        """Whether ``called`` agrees with ``expected``; ``None`` when not compared (the mode is
        ``ignore``). Arguments that could not be read (``error``) never agree."""
        if self.mode == "ignore" and self.matcher is None:
            return None
        if error is not None:
            return False
        if self.matcher is not None:
            return bool(self.matcher(called, expected))
        if self.mode in ("subset", "superset") and isinstance(called, Mapping):
            if not isinstance(expected, Mapping):
                return False
            small, large = (called, expected) if self.mode == "subset" else (expected, called)
            return all(k in large and self._same(v, large[k]) for k, v in small.items())
        return self._same(called, expected)

    def _same(self, a: Any, b: Any) -> bool:
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            return a.keys() == b.keys() and all(self._same(a[k], b[k]) for k in a)
        if isinstance(a, list | tuple) and isinstance(b, list | tuple):
            return len(a) == len(b) and all(self._same(x, y) for x, y in zip(a, b, strict=True))
        if isinstance(a, Mapping | list | tuple) or isinstance(b, Mapping | list | tuple):
            return False
        a, b = self._leaf(a), self._leaf(b)
        if self.tolerance is not None and _is_number(a) and _is_number(b):
            return bool(abs(float(a) - float(b)) <= self.tolerance)
        if isinstance(a, bool) or isinstance(b, bool):  # true is not 1 in JSON
            return a is b
        return bool(a == b)

    def _leaf(self, value: Any) -> Any:
        for transform in self.transforms:
            value = transform(value)
        if self.tolerance is not None and isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                return value
            return number if math.isfinite(number) else value
        return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _case(value: Any) -> Any:
    return value.casefold() if isinstance(value, str) else value


def _whitespace(value: Any) -> Any:
    return _SPACE.sub(" ", value).strip() if isinstance(value, str) else value


def _path(value: Any) -> Any:
    """``./a//b/`` and ``a/b`` alike (the text's own form, not the file system's)."""
    if not isinstance(value, str) or not value or ("/" not in value and "\\" not in value):
        return value
    return posixpath.normpath(value.replace("\\", "/"))


def _timestamp(value: Any) -> Any:
    """An ISO 8601 time with a zone as the same instant in UTC; without one, as written."""
    if not isinstance(value, str) or not _ISO.fullmatch(value.strip()):
        return value
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return value
    if moment.tzinfo is None:
        return moment.isoformat()
    return moment.astimezone(UTC).isoformat()


_BUILT_IN: Mapping[str, Normalizer] = {
    "case": _case,
    "whitespace": _whitespace,
    "path": _path,
    "timestamp": _timestamp,
}


def arguments_rule(
    mode: str, normalize: Sequence[Any], override: Any = None, *, where: str = "arguments"
) -> ArgumentRule:
    """The rule for one tool: the scorer's ``mode`` and ``normalize``, or its ``per_tool``
    ``override`` (an argument mode, a list of normalizers, or the author's matcher).

    Raises:
        ConfigError: an unknown mode or normalizer, or a bad tolerance, naming ``where``.
    """
    if override is not None:
        if isinstance(override, str):
            mode = override
        elif isinstance(override, list | tuple):
            normalize = override
        elif callable(override):
            return ArgumentRule(mode=mode, matcher=override)
        else:
            raise ConfigError(
                f"{where}: expected an argument mode ({', '.join(ARGUMENT_MODES)}), a list of "
                f"normalizers, or (from Python) a function; got {type(override).__name__}"
            )
    if mode not in ARGUMENT_MODES:
        raise ConfigError(
            f"{where}: unknown argument mode {mode!r}; use {', '.join(ARGUMENT_MODES)}"
        )
    if isinstance(normalize, str | Mapping) or not isinstance(normalize, Sequence):
        normalize = [normalize]
    transforms: list[Normalizer] = []
    tolerance: float | None = None
    for item in normalize:
        if isinstance(item, Mapping) and set(item) == {"number"}:
            tolerance = _tolerance(item["number"], where)
        elif item == "number":
            tolerance = 0.0
        elif isinstance(item, str) and item in _BUILT_IN:
            transforms.append(_BUILT_IN[item])
        elif callable(item) and not isinstance(item, str):
            transforms.append(item)
        else:
            shown = repr(item) if len(repr(item)) <= 60 else repr(item)[:57] + "..."
            raise ConfigError(
                f"{where}: unknown normalizer {shown}; use {', '.join(NORMALIZERS)} or "
                "{number: TOLERANCE} (a function only from Python, in the eval's own code)"
            )
    return ArgumentRule(mode=mode, transforms=tuple(transforms), tolerance=tolerance)


def _tolerance(value: Any, where: str) -> float:
    if not _is_number(value) or not math.isfinite(float(value)) or value < 0:
        raise ConfigError(f"{where}: number tolerance must be a finite number >= 0, got {value!r}")
    return float(value)
