"""A row's own checks: its ``checks`` (or ``assert``, promptfoo's word) list, read and named.

Each entry is written as an eval file's scorer entry: a registered check's name
(``is_xml``), or a one-key mapping of the name to its options (``contains: {value: refund,
threshold: 0.5, weight: 2}``). What makes a row unreadable is refused when the dataset is read
(:class:`~aieval.errors.DatasetError` naming the source and line): an entry of another shape, a
check no scorer is registered under, a ``name`` that is not a text, and what a row may not do: a
check a row may not use (one that runs code) or an option a row may not set (an endpoint, a key,
code execution; the allow-list is :data:`aieval.scorers._row_options.ROW_OPTIONS`). The values of
the options a row may set are validated when the sample is scored, so a bad one is that sample's
error, never a stopped run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aieval.core import ROW_CHECK_PREFIX, RowCheck
from aieval.errors import ConfigError, DatasetError

__all__ = ["CHECK_FIELDS", "MAX_ROW_CHECKS", "row_checks"]

#: The fields a row gives its checks in: ``checks``, or ``assert`` (promptfoo's word).
CHECK_FIELDS = ("checks", "assert")

#: The most checks one row may carry: a row is data, and each check may cost a model call.
MAX_ROW_CHECKS = 100


def row_checks(row: Mapping[str, Any], source: str, line: int) -> tuple[RowCheck, ...]:
    """The checks ``row`` carries, each named for the store (see :class:`RowCheck`)."""
    given = [name for name in CHECK_FIELDS if row.get(name) is not None]
    if not given:
        return ()
    if len(given) > 1:
        raise DatasetError(
            "row has both 'checks' and 'assert' (the same list); keep one",
            source=source,
            line=line,
        )
    (field,) = given
    entries = row[field]
    if not isinstance(entries, list):
        raise DatasetError(
            f"'{field}' must be a list of checks, e.g. [{{contains: {{value: refund}}}}], "
            f"got {type(entries).__name__}",
            source=source,
            line=line,
        )
    if len(entries) > MAX_ROW_CHECKS:
        raise DatasetError(
            f"'{field}' has {len(entries)} checks; a row may carry at most {MAX_ROW_CHECKS} "
            "(put checks every row shares in the eval file's default_checks)",
            source=source,
            line=line,
        )
    checks: list[RowCheck] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        where = f"{field}[{i}]"
        check, options = _entry(entry, where, source, line)
        name = options.pop("name", None)
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise DatasetError(
                f"{where}.name must be a non-empty text, got {name!r}", source=source, line=line
            )
        base = ROW_CHECK_PREFIX + (name or check)
        seen[base] = seen.get(base, 0) + 1
        key = base if seen[base] == 1 else f"{base}#{seen[base]}"
        checks.append(RowCheck(key=key, check=check, options=options, where=where))
    return tuple(checks)


def _entry(entry: Any, where: str, source: str, line: int) -> tuple[str, dict[str, Any]]:
    """The check's name and its options (a copy) from one entry."""
    if isinstance(entry, str):
        check, options = entry, {}
    elif isinstance(entry, Mapping) and len(entry) == 1:
        ((check, raw),) = entry.items()
        if raw is not None and not isinstance(raw, Mapping):
            raise DatasetError(
                f"{where}.{check}: the options must be a mapping, got {type(raw).__name__}",
                source=source,
                line=line,
            )
        options = dict(raw or {})
    else:
        hint = ""
        if isinstance(entry, Mapping) and "type" in entry:
            hint = f" (write {{{entry['type']}: {{...options}}}} rather than type: ...)"
        raise DatasetError(
            f"{where}: a check is a name or a one-key mapping name: {{options}}{hint}",
            source=source,
            line=line,
        )
    if not isinstance(check, str) or not check:
        raise DatasetError(f"{where}: a check's name must be a text", source=source, line=line)
    _allowed(check, options, where, source, line)
    return check, options


def _allowed(check: str, options: Mapping[Any, Any], where: str, source: str, line: int) -> None:
    """Refuse a check no scorer is registered under (a row names registered checks only), a
    check a row may not use, and an option a row may not set (see the module docstring)."""
    if ":" in check:
        raise DatasetError(
            f"{where}: {check!r}: a row names registered checks only, not import references; "
            "register the scorer with @scorer in a file of the eval's imports",
            source=source,
            line=line,
        )
    # the scorers load only for rows with checks
    from aieval.scorers import check_row_check

    try:
        check_row_check(check, options, unknown=False)
    except ConfigError as exc:
        raise DatasetError(f"{where}: {exc}", source=source, line=line) from None
