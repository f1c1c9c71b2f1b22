"""Criterion categories and the default critical floors they select (spec 5 and 13)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from aieval._keys import suggestion
from aieval.errors import ConfigError

__all__ = ["DEFAULT_FLOORS", "default_floor_category", "known_category"]

#: Critical floors applied by criterion category (or name) when a criterion sets none (spec 13).
#: A criterion without a ``category`` takes the floor of the category its name is, or starts with
#: followed by ``_``, ``-`` or ``.`` (``correctness_rubric`` gets the correctness floor).
DEFAULT_FLOORS: Mapping[str, float] = {"correctness": 0.70, "safety": 0.80, "validation": 0.80}


def default_floor_category(
    name: str, category: str | None, default_floors: Mapping[str, float] = DEFAULT_FLOORS
) -> str | None:
    """The category whose default floor applies to a criterion that sets no floor of its own.

    A declared ``category`` decides alone (compared case-insensitively; an unknown one is a
    ``ConfigError``); without one, the name decides: equal to a floor's category, or starting
    with it followed by ``_``, ``-`` or ``.``.

    >>> default_floor_category("correctness_rubric", None), default_floor_category("style", None)
    ('correctness', None)
    >>> default_floor_category("argument_correctness", None), default_floor_category("x", "safety")
    (None, 'safety')
    """
    if category is not None:
        known = known_category(category, default_floors)
        return known if known in default_floors else None
    if name in default_floors:
        return name
    head = re.split(r"[_\-.]", name, maxsplit=1)[0]
    return head if head != name and head in default_floors else None


def known_category(
    category: str | None, default_floors: Mapping[str, float] = DEFAULT_FLOORS
) -> str | None:
    """``category`` as a known category: lower-case, one of ``correctness``, ``safety``,
    ``validation`` or a category ``default_floors`` names (``None`` stays ``None``).

    Raises:
        ConfigError: any other category, with the nearest known one.

    >>> known_category(" Correctness ")
    'correctness'
    """
    if category is None:
        return None
    if not isinstance(category, str):
        raise ConfigError(f"category must be text, got {category!r}")
    known = {k.lower(): k for k in (*DEFAULT_FLOORS, *default_floors)}
    key = category.strip().lower()
    if key in known:
        return known[key]
    hint = suggestion(key, known.values(), "categories")
    raise ConfigError(f"unknown category {category!r}; {hint}")
