"""The quickstart datasets: well-formed, reproducible, and v2 really is the better model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from statistics import mean
from typing import Any

import pytest

from aieval.scorers import json_valid, token_f1

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
FILES = ["support_qa.jsonl", "order_extraction.jsonl"]
VERSIONS = ["support-bot-v1", "support-bot-v2"]


def load(name: str) -> list[dict[str, Any]]:
    lines = (QUICKSTART / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in FILES])
def test_rows_have_unique_ids_and_every_field(name: str) -> None:
    rows = load(name)
    assert len(rows) >= 80
    assert len({row["id"] for row in rows}) == len(rows)
    for row in rows:
        assert isinstance(row["prompt"], str) and row["prompt"].strip()
        assert isinstance(row["expected"], str) and row["expected"].strip()
        assert isinstance(row["metadata"], dict)
        assert sorted(row["predictions"]) == VERSIONS
        assert all(isinstance(p, str) and p for p in row["predictions"].values())


def test_support_rows_carry_the_documented_metadata() -> None:
    rows = load("support_qa.jsonl")
    assert 250 <= len(rows) <= 350
    for row in rows:
        meta = row["metadata"]
        assert meta["difficulty"] in {"easy", "medium", "hard"}
        assert meta["channel"] in {"chat", "email"}
    categories = {row["metadata"]["category"] for row in rows}
    assert {"billing", "shipping", "returns", "account", "technical", "product"} <= categories


def test_generator_reproduces_committed_files(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(QUICKSTART / "make_data.py"), "--out", str(tmp_path)], check=True
    )
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (QUICKSTART / name).read_bytes(), name


def mean_score(rows: list[dict[str, Any]], version: str, metric: Any) -> float:
    return mean(metric(row["predictions"][version], row["expected"]) for row in rows)


def test_v2_beats_v1_on_token_f1_but_not_on_every_row() -> None:
    rows = load("support_qa.jsonl")
    v1 = mean_score(rows, "support-bot-v1", token_f1)
    v2 = mean_score(rows, "support-bot-v2", token_f1)
    assert v2 > v1
    v1_wins = sum(
        token_f1(row["predictions"]["support-bot-v1"], row["expected"])
        > token_f1(row["predictions"]["support-bot-v2"], row["expected"])
        for row in rows
    )
    assert v1_wins > 0


def test_extraction_expected_is_canonical_json() -> None:
    for row in load("order_extraction.jsonl"):
        parsed = json.loads(row["expected"])
        assert set(parsed) == {"order_id", "intent", "items", "urgency"}
        assert row["expected"] == json.dumps(parsed, sort_keys=True)


def test_v1_emits_more_invalid_json_than_v2() -> None:
    rows = load("order_extraction.jsonl")
    v1 = mean_score(rows, "support-bot-v1", json_valid)
    v2 = mean_score(rows, "support-bot-v2", json_valid)
    assert v1 < v2 < 1.0 or v1 < v2 == 1.0
