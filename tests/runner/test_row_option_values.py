"""A row may set an option on the allow-list only to a value that loads nothing: a tokenizer that
downloads a model, or a SQL dialect looked up among installed plug-ins, is the eval author's to
name (docs/checks.md "What a row may set"; docs/security.md "Dataset rows and their checks")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aieval import run
from aieval.core import Example, RowCheck
from aieval.errors import DatasetError
from aieval.runner._rowchecks import RowScorers
from aieval.scorers._row_options import ROW_OPTIONS, ROW_VALUES


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _row(checks: list[Any]) -> dict[str, Any]:
    return {"id": "r", "input": "q", "prediction": "the cat sat", "expected": "the cat sat",
            "checks": checks}  # fmt: skip


@pytest.mark.parametrize("tokenize", ["flores200", "flores101", "spm", "spBLEU-1K"])
def test_a_row_cannot_make_bleu_download_a_tokenizer_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tokenize: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # where sacrebleu would write the model
    data = _jsonl(tmp_path / "data.jsonl", [_row([{"bleu": {"tokenize": tokenize}}])])
    with pytest.raises(DatasetError) as caught:
        run(name="rows", dataset=data, scorers=[], store=False)
    message = str(caught.value)
    assert "data.jsonl, line 1: checks[0]: bleu.tokenize: a dataset row may not set" in message
    assert f"'tokenize' to {tokenize!r} (another tokenizer downloads a model" in message
    assert "'13a'" in message and "eval file's scorers" in message
    assert not (tmp_path / ".sacrebleu").exists()


@pytest.mark.parametrize(
    ("check", "option", "value"),
    [
        ("is_sql", "dialect", "evil_plugin"),  # looked up among installed entry points
        ("is_sql", "dialect", "postgres, normalization_strategy=case_sensitive"),
        ("is_sql", "dialect", ["postgres"]),  # not even hashable
        ("rouge_l", "tokenizer", "nltk"),
        ("exact_match", "normalize", "lower"),
    ],
)
def test_every_value_limited_option_refuses_other_values(
    tmp_path: Path, check: str, option: str, value: Any
) -> None:
    data = _jsonl(tmp_path / "data.jsonl", [_row([{check: {option: value}}])])
    with pytest.raises(DatasetError, match=rf"line 1: checks\[0\]: {check}\.{option}: .* to "):
        run(name="rows", dataset=data, scorers=[], store=False)


def test_the_runner_refuses_such_a_value_however_the_check_was_built() -> None:
    smuggled = (RowCheck("row:bleu", "bleu", {"tokenize": "flores200"}),)
    found = RowScorers().of(Example("r", "q", prediction="a", expected="a", checks=smuggled))
    assert found.scorers == []
    assert (
        "bleu.tokenize: a dataset row may not set 'tokenize' to 'flores200'"
        in (found.errors["row:bleu"])
    )


def test_the_values_a_row_may_give_still_work(tmp_path: Path) -> None:
    pytest.importorskip("sacrebleu")
    pytest.importorskip("sqlglot")
    checks = [
        {"bleu": {"tokenize": "intl", "name": "b1"}},
        {"bleu": {"tokenize": "char", "name": "b2"}},
        {"is_sql": {"dialect": "postgres", "name": "sql", "negate": True}},
        {"rouge_l": {"tokenizer": "rouge_score"}},
        {"exact_match": {"normalize": "squad"}},
    ]
    result = run(name="rows", dataset=_jsonl(tmp_path / "d.jsonl", [_row(checks)]), scorers=[],
                 store=False)  # fmt: skip
    scores = {k: s.value for k, s in result.samples[0].scores.items()}
    assert scores == {"row:b1": 1.0, "row:b2": 1.0, "row:sql": 1.0, "row:rouge_l": 1.0,
                      "row:exact_match": 1.0}  # fmt: skip


def test_every_value_limited_option_is_one_a_row_may_set() -> None:
    for check, options in ROW_VALUES.items():
        assert set(options) <= ROW_OPTIONS[check], check
