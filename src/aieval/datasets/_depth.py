"""How deep a dataset row may nest: a bound that every way a row arrives is held to.

Python's JSON decoder and encoder, ``copy`` and most tree walks recurse once per level, so a
row nested a thousand levels deep would stop the run with a ``RecursionError`` wherever it is
first walked. A row is data from whoever wrote the dataset: nesting beyond
:data:`MAX_ROW_DEPTH` is refused when it is read, naming the file and line.
"""

from __future__ import annotations

from typing import Any

from aieval._json import too_deep
from aieval.errors import DatasetError

__all__ = ["MAX_ROW_DEPTH", "check_row_depth", "decode_error"]

#: The most levels of objects and arrays in one row, the row itself being the first.
MAX_ROW_DEPTH = 100

#: Values that nest nothing (a row of only these is one level deep).
_FLAT = frozenset({str, int, float, bool, type(None)})

_TOO_DEEP = (
    f"the row nests deeper than {MAX_ROW_DEPTH} levels of objects and arrays, the most a dataset "
    "row may; flatten it, or keep a deep value as a JSON text in a string field"
)


def check_row_depth(row: Any, source: str, line: int) -> None:
    """Refuse ``row`` with a :class:`DatasetError` naming ``source`` and ``line`` when it nests
    deeper than :data:`MAX_ROW_DEPTH`."""
    if type(row) is dict and _FLAT.issuperset(map(type, row.values())):
        return  # one level: the common row, told without a walk
    if too_deep(row, MAX_ROW_DEPTH):
        raise DatasetError(_TOO_DEEP, source=source, line=line)


def decode_error(source: str, line: int | None, what: str = "the row") -> DatasetError:
    """The error for text the JSON decoder gave up on for its depth (a ``RecursionError``)."""
    return DatasetError(
        f"{what} nests too deeply to decode (a dataset row may nest at most {MAX_ROW_DEPTH} "
        "levels of objects and arrays)",
        source=source,
        line=line,
    )
