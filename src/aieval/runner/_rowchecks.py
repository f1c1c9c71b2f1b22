"""A dataset row's own checks, resolved into scorers once per distinct entry.

Rows repeat the same checks (a thousand rows with ``contains: {value: ...}`` and a dozen
values): each distinct entry is resolved once, through the same function as an eval file's
scorer entries (:func:`~aieval.runner._references.resolve_entry`), and kept. An entry that does
not resolve (a bad option, a threshold outside 0..1) is kept as its message, which becomes the
score error of that check on every row that carries it, naming the row and the field.

The row allow-list (:func:`~aieval.scorers._row_options.check_row_check`) is applied here again,
whatever built the :class:`RowCheck` (the dataset loader refuses it first): a check a row may
not use, or an option a row may not set, is never built into a scorer, so no code runs and no
key is sent on a row's word.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from aieval.core import Example, RowCheck
from aieval.errors import ConfigError
from aieval.runner._references import resolve_entry
from aieval.scorers import Scorer, check_row_check

__all__ = ["RowScorers", "RowScoring"]

#: Distinct entries kept resolved; beyond this, entries resolve again on every row.
_MAX_CACHED = 10_000


@dataclass(slots=True)
class RowScoring:
    """What one row's checks add to its scoring.

    Attributes:
        scorers: the checks that resolved, each named by its :attr:`RowCheck.key`.
        errors: the checks that did not, by key: the message naming the row and the field.
    """

    scorers: list[Scorer] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)


class RowScorers:
    """Resolves the checks of each row (see the module docstring)."""

    def __init__(self) -> None:
        self._cache: dict[str, Scorer | str] = {}

    def of(self, example: Example) -> RowScoring:
        """The scorers (and the unresolvable entries) of ``example``'s own checks."""
        found = RowScoring()
        for check in example.checks:
            resolved = self._resolve(check)
            if isinstance(resolved, Scorer):
                found.scorers.append(resolved)
            else:
                found.errors[check.key] = f"row {example.id!r} {check.where}: {resolved}"
        return found

    def resolved(self) -> list[Scorer]:
        """The scorers resolved so far (to release their resources when the run ends)."""
        return [s for s in self._cache.values() if isinstance(s, Scorer)]

    def _resolve(self, check: RowCheck) -> Scorer | str:
        key = _cache_key(check)
        if key is not None and key in self._cache:
            return self._cache[key]
        options = {**check.options, "name": check.key}
        try:
            check_row_check(check.check, check.options)
            resolved: Scorer | str = resolve_entry(check.check, options, check.check)
        except ConfigError as exc:
            resolved = str(exc)
        if key is not None and len(self._cache) < _MAX_CACHED:
            self._cache[key] = resolved
        return resolved


def _cache_key(check: RowCheck) -> str | None:
    """The entry as canonical JSON, or ``None`` when its options are not JSON (not cached)."""
    try:
        return json.dumps(
            [check.key, check.check, dict(check.options)], sort_keys=True, allow_nan=True
        )
    except (TypeError, ValueError):
        return None
