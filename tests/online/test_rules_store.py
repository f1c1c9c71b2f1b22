"""Rules kept in the store, on both backends: the rules file's replace the file's only, an
API rule never replaces a file rule (nor the reverse), pause/resume/delete, backfill requests."""

from __future__ import annotations

import dataclasses

import pytest

from aieval.errors import ConfigError
from aieval.online import OnlineRule, RuleScoring, active_rules, install_file_rules, stored_rules
from aieval.online._rules import rule_to_json
from aieval.store import RulesChange, Store


def _rule(name: str, **changes: object) -> OnlineRule:
    rule = OnlineRule(name=name, scoring=RuleScoring(scorers=("json_valid",)))
    return dataclasses.replace(rule, **changes)  # type: ignore[arg-type]


def test_a_rules_file_replaces_only_the_file_rules(store_location: str) -> None:
    with Store(store_location) as store:
        assert store.save_online_rule("from-api", rule_to_json(_rule("from-api")), source="api")
        first = install_file_rules(store, [_rule("a"), _rule("b"), _rule("c")])
        assert first == RulesChange(added=("a", "b", "c"))
        again = install_file_rules(
            store, [_rule("a"), _rule("b", sampling_rate=0.5), _rule("d", paused=True)]
        )
        assert again == RulesChange(added=("d",), changed=("b",), removed=("c",), kept=("a",))
        rows = {row.name: (row.source, rule) for row, rule in stored_rules(store)}
        assert sorted(rows) == ["a", "b", "d", "from-api"]
        assert rows["b"][1].sampling_rate == 0.5 and rows["from-api"][0] == "api"
        assert [r.name for r in active_rules(store)] == ["a", "b", "from-api"]


def test_a_file_rule_named_as_an_api_rule_is_refused_and_nothing_changes(
    store_location: str,
) -> None:
    with Store(store_location) as store:
        install_file_rules(store, [_rule("kept")])
        store.save_online_rule("shared", rule_to_json(_rule("shared")), source="api")
        with pytest.raises(
            ConfigError, match=r"rules\.yaml: rule 'shared' has the name of the rule"
        ):
            install_file_rules(store, [_rule("new"), _rule("shared")], where="rules.yaml")
        assert [(r.name, r.source) for r in store.online_rules()] == [
            ("kept", "file"),
            ("shared", "api"),
        ]


def test_api_saves_never_replace_a_file_rule_and_pause_resume_delete(store_location: str) -> None:
    with Store(store_location) as store:
        install_file_rules(store, [_rule("f")])
        assert not store.save_online_rule("f", rule_to_json(_rule("f", window="day")), source="api")
        stored = store.online_rule("f")
        assert stored is not None and stored.source == "file" and '"hour"' in stored.spec
        assert store.save_online_rule("x", rule_to_json(_rule("x")), source="api")
        assert store.save_online_rule("x", rule_to_json(_rule("x", window="day")), source="api")
        assert store.pause_online_rule("x")
        assert [r.name for r in active_rules(store)] == ["f"]
        assert store.pause_online_rule("x", paused=False)
        assert not store.pause_online_rule("absent")
        assert store.delete_online_rule("x") and not store.delete_online_rule("x")
        assert store.online_rule("x") is None
        assert store.request_online_backfill("f", 10.0, 20.0)
        assert not store.request_online_backfill("f", 10.0, 20.0)  # asked once
        (asked,) = store.pending_backfills()
        store.advance_backfill(asked, "", done=True)
        assert store.pending_backfills() == []
        # done, the same range asked again is done again (its budget skips put back)
        assert store.request_online_backfill("f", 10.0, 20.0)
        assert [(b.rule, b.since, b.until, b.done_at) for b in store.pending_backfills()] == [
            ("f", 10.0, 20.0, None)
        ]
