"""Rules as the store keeps them, read back as :class:`OnlineRule`: the rules file's rules
installed at a server's start, the API's added one at a time, the active ones for the engine."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

from aieval.online._model import OnlineRule
from aieval.online._rules import rule_from_json, rule_to_json
from aieval.store import RulesChange, Store, StoredRule

__all__ = ["active_rules", "install_file_rules", "rule_of", "stored_rules"]

log = logging.getLogger("aieval.online")


def rule_of(row: StoredRule) -> OnlineRule:
    """The rule of a stored row; paused as the row says (pausing over the API changes the
    row, not the spec)."""
    return dataclasses.replace(rule_from_json(row.spec), paused=row.paused)


def stored_rules(store: Store) -> list[tuple[StoredRule, OnlineRule]]:
    """Every stored rule with its row, by name."""
    return [(row, rule_of(row)) for row in store.online_rules()]


def active_rules(store: Store) -> list[OnlineRule]:
    """The rules not paused, by name: the ones that match new traces and claim work."""
    return [rule for _, rule in stored_rules(store) if not rule.paused]


def install_file_rules(
    store: Store,
    rules: Sequence[OnlineRule],
    *,
    where: str = "the rules file",
    installer: tuple[str, str] | None = None,
    take_over: bool = False,
) -> RulesChange:
    """Make the store's ``'file'`` rules exactly ``rules`` (the API's are kept), and log
    what was added, changed and removed. ``installer``: ``(rules file, host)``, recorded;
    file rules another file or host installed are replaced only with ``take_over``.

    Raises:
        ConfigError: a rule has the name of a rule added through the API, or the file rules
            came from another file or host without ``take_over`` (nothing changed).
    """
    change = store.replace_file_rules(
        {rule.name: (rule_to_json(rule), rule.paused) for rule in rules},
        where=where,
        installer=installer,
        take_over=take_over,
    )
    for what, names in (
        ("added", change.added),
        ("changed", change.changed),
        ("removed", change.removed),
    ):
        if names:
            log.info("online rules from %s: %s %s", where, what, ", ".join(names))
    return change
