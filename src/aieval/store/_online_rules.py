"""Online scoring rules kept in the store: their specs (JSON, read by :mod:`aieval.online`),
where each came from (``'file'``: the server's rules file; ``'api'``: its API), and whether
it is paused (the ``paused`` column decides, whatever the spec says)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from aieval.errors import ConfigError
from aieval.store._connection import Connection

__all__ = ["OnlineRulesTable", "RuleSource", "RulesChange", "StoredRule"]

#: Where a stored rule came from.
RuleSource = Literal["file", "api"]


@dataclass(frozen=True, slots=True)
class StoredRule:
    """One row of ``online_rules``: the rule's ``spec`` (JSON) and its bookkeeping."""

    name: str
    spec: str
    source: RuleSource
    paused: bool
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class RulesChange:
    """What replacing the rules file's rules did, by rule name (sorted)."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()


_COLUMNS = "name, spec, source, paused, created_at, updated_at"
#: The ``meta`` key recording which rules file, on which host, installed the file rules.
_INSTALLED_BY = "online_rules_file"


def _row(r: tuple[object, ...]) -> StoredRule:
    source = "api" if r[2] == "api" else "file"
    return StoredRule(str(r[0]), str(r[1]), source, bool(r[3]), float(r[4]), float(r[5]))  # type: ignore[arg-type]


class OnlineRulesTable(Connection):
    """The ``online_rules`` table of a :class:`~aieval.store.Store`."""

    def online_rules(self, source: RuleSource | None = None) -> list[StoredRule]:
        """The stored rules (of ``source`` only, if given), by name."""
        where, args = ("WHERE source = ?", (source,)) if source else ("", ())
        rows = self._read(f"SELECT {_COLUMNS} FROM online_rules {where} ORDER BY name", args)
        return [_row(r) for r in rows]

    def online_rule(self, name: str) -> StoredRule | None:
        """The stored rule named ``name``, or ``None``."""
        row = self._read_one(f"SELECT {_COLUMNS} FROM online_rules WHERE name = ?", (name,))
        return None if row is None else _row(row)

    def save_online_rule(
        self, name: str, spec: str, *, source: RuleSource, paused: bool = False
    ) -> bool:
        """Add the rule ``name``, or replace it when it is of the same ``source``.

        Returns:
            ``False`` (nothing written) when a rule of that name comes from the other source:
            an API rule never replaces a file rule, nor the reverse.
        """
        now = time.time()
        with self._lock:
            try:
                with self._db.transaction(exclusive=True):
                    row = self._db.one(
                        "INSERT INTO online_rules (name, spec, source, paused, created_at,"
                        " updated_at) VALUES (?, ?, ?, ?, ?, ?)"
                        " ON CONFLICT (name) DO UPDATE SET spec = excluded.spec,"
                        " paused = excluded.paused, updated_at = excluded.updated_at"
                        " WHERE online_rules.source = excluded.source RETURNING name",
                        (name, spec, source, int(paused), now, now),
                    )
            except self._db.errors as exc:
                raise self._failed(exc) from exc
        return row is not None

    def pause_online_rule(self, name: str, paused: bool = True) -> bool:
        """Pause (or resume) the rule ``name``; ``False`` when there is none."""
        with self._lock:
            try:
                with self._db.transaction(exclusive=True):
                    row = self._db.one(
                        "UPDATE online_rules SET paused = ?, updated_at = ? WHERE name = ?"
                        " RETURNING name",
                        (int(paused), time.time(), name),
                    )
            except self._db.errors as exc:
                raise self._failed(exc) from exc
        return row is not None

    def delete_online_rule(self, name: str) -> bool:
        """Delete the rule ``name`` (its windows' runs and work items stay); ``False`` when
        there is none."""
        with self._lock:
            try:
                with self._db.transaction(exclusive=True):
                    row = self._db.one(
                        "DELETE FROM online_rules WHERE name = ? RETURNING name", (name,)
                    )
            except self._db.errors as exc:
                raise self._failed(exc) from exc
        return row is not None

    def replace_file_rules(
        self,
        specs: Mapping[str, tuple[str, bool]],
        *,
        where: str = "the rules file",
        installer: tuple[str, str] | None = None,
        take_over: bool = False,
    ) -> RulesChange:
        """Make the ``'file'`` rules exactly ``specs`` (name -> (spec, paused)), in one
        transaction; the ``'api'`` rules are never touched. A file rule's ``paused`` is the
        file's at each start. ``installer``: ``(rules file, host)`` installing them, recorded;
        the file rules another file or host installed are changed only with ``take_over``
        (the same rules, from any file or host, are fine).

        Raises:
            ConfigError: a rule of ``specs`` has the name of a rule added through the API, or
                the stored file rules came from another rules file or host, these would
                change them, and ``take_over`` is not set (nothing is changed).
        """
        now = time.time()
        with self._lock:
            try:
                with self._db.transaction(exclusive=True):
                    stored = {
                        r[0]: (r[1], r[2], bool(r[3]))
                        for r in self._db.query(
                            "SELECT name, spec, source, paused FROM online_rules"
                        )
                    }
                    clash = sorted(n for n in specs if n in stored and stored[n][1] != "file")
                    if clash:
                        raise ConfigError(
                            f"{where}: rule {clash[0]!r} has the name of the rule "
                            f"{clash[0]!r} added through the API (aieval online rules lists "
                            "it); rename the file's rule, or delete the API's rule first"
                        )
                    old = {n: (s, p) for n, (s, src, p) in stored.items() if src == "file"}
                    added = sorted(set(specs) - set(old))
                    removed = sorted(set(old) - set(specs))
                    changed = sorted(n for n in specs if n in old and old[n] != specs[n])
                    if installer is not None:
                        change = RulesChange(tuple(added), tuple(changed), tuple(removed))
                        held = bool(old)
                        self._check_installer(installer, where, change if held else None, take_over)
                    for name in removed:
                        self._db.execute("DELETE FROM online_rules WHERE name = ?", (name,))
                    for name in [*added, *changed]:
                        spec, paused = specs[name]
                        self._db.execute(
                            "INSERT INTO online_rules (name, spec, source, paused, created_at,"
                            " updated_at) VALUES (?, ?, 'file', ?, ?, ?)"
                            " ON CONFLICT (name) DO UPDATE SET spec = excluded.spec,"
                            " paused = excluded.paused, updated_at = excluded.updated_at",
                            (name, spec, int(paused), now, now),
                        )
            except self._db.errors as exc:
                raise self._failed(exc) from exc
        kept = sorted(n for n in specs if n in old and n not in changed)
        return RulesChange(tuple(added), tuple(changed), tuple(removed), tuple(kept))

    def _check_installer(
        self,
        installer: tuple[str, str],
        where: str,
        change: RulesChange | None,
        take_over: bool,
    ) -> None:
        """Refuse (unless ``take_over``) a ``change`` to the file rules another rules file or
        host installed (``None``: none held), then record ``installer``; inside the caller's
        transaction. The same rules from any file or host change nothing: several servers
        start with one file."""
        row = self._db.one("SELECT value FROM meta WHERE key = ?", (_INSTALLED_BY,))
        before = _installer(str(row[0])) if row is not None else None
        would = (
            [
                f"{what} {', '.join(names)}"
                for what, names in (
                    ("add", change.added),
                    ("change", change.changed),
                    ("remove", change.removed),
                )
                if names
            ]
            if change is not None
            else []
        )
        if would and before is not None and before != installer and not take_over:
            raise ConfigError(
                f"{where}: the store's rules-file rules were installed from {before[0]} on "
                f"host {before[1]}, and this file's rules would {'; '.join(would)}: the "
                "servers started with the other file would score rules no longer theirs. "
                "Start with the same rules, or add --online-replace to replace them"
            )
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (_INSTALLED_BY, json.dumps({"file": installer[0], "host": installer[1]})),
        )

    def online_rules_installer(self) -> tuple[str, str] | None:
        """``(rules file, host)`` that installed the stored file rules, or ``None``."""
        row = self._read_one("SELECT value FROM meta WHERE key = ?", (_INSTALLED_BY,))
        return None if row is None else _installer(str(row[0]))

    def request_online_backfill(
        self, rule: str, since: float, until: float, *, requested_at: float | None = None
    ) -> bool:
        """Ask for a backfill of ``rule`` over traces received in [``since``, ``until``);
        ``False`` when the same backfill is still being done (it is not asked twice). The same
        range asked again once done is done again: its traces already matched keep their rows
        (nothing is scored twice), and its ``budget_exhausted`` and ``error`` skips are put
        back to pending."""
        with self._lock:
            try:
                with self._db.transaction(exclusive=True):
                    row = self._db.one(
                        "INSERT INTO online_backfills (rule, since, until, requested_at)"
                        " VALUES (?, ?, ?, ?) ON CONFLICT (rule, since, until) DO UPDATE SET"
                        " cursor = '', done_at = NULL, requested_at = excluded.requested_at"
                        " WHERE online_backfills.done_at IS NOT NULL RETURNING rule",
                        (rule, since, until, time.time() if requested_at is None else requested_at),
                    )
            except self._db.errors as exc:
                raise self._failed(exc) from exc
        return row is not None


def _installer(value: str) -> tuple[str, str] | None:
    """The recorded ``(file, host)`` (``None`` for a value of another shape)."""
    try:
        data = json.loads(value)
    except ValueError:
        return None
    if isinstance(data, dict) and isinstance(data.get("file"), str):
        return str(data["file"]), str(data.get("host", ""))
    return None
