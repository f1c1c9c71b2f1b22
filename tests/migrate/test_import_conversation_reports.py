"""What a conversation import's report says: a promptfoo provider left out is named with each
of its keys and what ``--allow-endpoints`` would keep; a reason names its place once; a copied
value under a key that looks like a secret gets its own line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from aieval.migrate import import_deepeval, import_promptfoo_conversations

SIMULATED = {"id": "promptfoo:simulated-user", "config": {"maxTurns": 2}}


def _promptfoo(tmp_path: Path, doc: dict[str, Any], **options: Any) -> Any:
    config = tmp_path / "pf.yaml"
    config.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return import_promptfoo_conversations(config, tmp_path / "out", **options)


def _notes(result: Any) -> dict[str, str]:
    return {t.field: t.note for t in result.untranslated}


def test_a_dropped_provider_is_said_not_carried_over_naming_every_key(tmp_path: Path) -> None:
    provider = {
        "id": "openai:chat:gpt-4o",
        "config": {
            "apiBaseUrl": "http://127.0.0.1:9",
            "apiKey": "sk-written-in-the-file",
            "apiKeyEnvar": "MY_KEY",
            "transformResponse": "json.output",
        },
    }
    doc = {
        "prompts": ["You are a support agent."],
        "providers": [provider],
        "defaultTest": {"provider": SIMULATED},
        "tests": [{"vars": {"instructions": "get a refund"}}],
    }
    result = _promptfoo(tmp_path, doc, allow_endpoints=True)
    notes = _notes(result)
    assert notes["openai:chat:gpt-4o"].startswith("not carried over (set target: yourself)")
    assert (
        "config.apiKey, config.transformResponse cannot be carried over"
        in notes["openai:chat:gpt-4o"]
    )
    assert "--allow-endpoints would not carry it over either" in notes["openai:chat:gpt-4o"]
    for key in ("apiBaseUrl", "apiKeyEnvar"):
        assert "--allow-endpoints would keep it" in notes[f"config.{key}"]
    assert notes["config.apiKey"].startswith("a key written in the file: never carried over")
    assert notes["config.transformResponse"].startswith("code promptfoo runs: never run")
    assert "sk-written-in-the-file" not in result.text()  # a key is never shown
    assert "target" not in yaml.safe_load(result.eval_file.read_text(encoding="utf-8"))
    # only the endpoint keys set: --allow-endpoints would carry it over, and says so
    provider["config"] = {"apiBaseUrl": "http://127.0.0.1:9", "apiKeyEnvar": "MY_KEY"}
    (tmp_path / "again").mkdir()
    kept = _promptfoo(tmp_path / "again", doc)
    assert "pass --allow-endpoints to carry it over" in _notes(kept)["openai:chat:gpt-4o"]


def test_a_reason_names_its_place_once(tmp_path: Path) -> None:
    bad = {
        "id": "promptfoo:simulated-user",
        "config": {"instructions": "x", "initialMessages": ["not a message"]},
    }
    doc = {
        "prompts": ["You are a support agent."],
        "providers": ["openai:chat:gpt-4o"],
        "tests": [{"provider": bad}, {"provider": SIMULATED, "vars": {"instructions": "ok"}}],
    }
    result = _promptfoo(tmp_path, doc)
    (line,) = [t for t in result.untranslated if t.field == "(test)"]
    assert (line.where, line.note) == (
        "pf.yaml: tests[0]",
        "initialMessages[0]: a message is {role, content}",
    )
    assert "- pf.yaml: tests[0]: `(test)`: initialMessages[0]: a message" in result.text()


def test_a_copied_key_that_looks_like_a_secret_gets_a_line(tmp_path: Path) -> None:
    source = tmp_path / "goldens.json"
    item = {
        "scenario": "Refund a kettle",
        "turns": [{"role": "user", "content": "hi"}],
        "additional_metadata": {
            "team": "support",
            "api_key": "sk-1",
            "auth": [{"accessToken": "t"}],
            "password": "p",
        },
    }
    source.write_text(json.dumps([item]), encoding="utf-8")
    result = import_deepeval(source, tmp_path / "out")
    flagged = {
        (t.field, t.became) for t in result.translated if t.note.startswith("copied as data")
    }
    assert flagged == {
        (f"additional_metadata{p}", f"metadata.additional_metadata{p}")
        for p in (".api_key", ".auth[0].accessToken", ".password")
    }
    assert "copied as data: looks like a secret" in result.text()
    row = json.loads(result.scenarios.read_text(encoding="utf-8"))
    assert row["metadata"]["additional_metadata"]["api_key"] == "sk-1"  # data, kept as it was


def test_a_test_that_fails_to_translate_is_listed_under_translated_nowhere(
    tmp_path: Path,
) -> None:
    """The second test's instructions translate, then its opening message does not: the test
    is not written, so the report lists none of it as translated, only why it was left out."""
    good = {"vars": {"instructions": "You want a refund."}}
    bad = {
        "vars": {"instructions": "You want a new card."},
        "provider": {**SIMULATED, "config": {"initialMessages": [{"role": "user"}]}},
    }
    doc = {"prompts": ["You are a bank."], "providers": ["openai:gpt-4o"], "tests": [good, bad]}
    doc["defaultTest"] = {"provider": SIMULATED}
    result = _promptfoo(tmp_path, doc)
    assert result.count == 1
    translated = {(t.field, t.became): t.where for t in result.translated}
    assert translated[("instructions", "goal")] == "pf.yaml: tests[0]"
    assert all("tests[1]" not in where for where in translated.values()), translated
    assert "a message is {role, content}" in _notes(result)["(test)"]
