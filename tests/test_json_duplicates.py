"""Every JSON file aieval reads refuses a key given twice, naming the file (and line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aieval.datasets import load_dataset
from aieval.errors import ConfigError, DatasetError, WorkflowError
from aieval.report import PromotionPolicy
from aieval.workflows import load_run

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "workflows"


def test_a_jsonl_row_with_expected_twice_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text('{"prompt": "a", "expected": "x"}\n{"prompt": "b", "expected": "y", '
                    '"expected": "z"}\n')  # fmt: skip
    with pytest.raises(DatasetError, match="duplicate key 'expected'") as info:
        list(load_dataset(path))
    assert "data.jsonl" in str(info.value) and "2" in str(info.value)


def test_a_json_array_dataset_refuses_a_nested_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text('[{"prompt": "a", "metadata": {"k": 1, "k": 2}}]')
    with pytest.raises(DatasetError, match="duplicate key 'k'"):
        list(load_dataset(path))


def test_a_json_policy_with_alpha_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text('{"alpha": 0.05, "alpha": 0.5}')
    with pytest.raises(ConfigError, match=r"policy\.json.*duplicate key 'alpha'"):
        PromotionPolicy.from_file(path)


def test_a_run_log_with_a_duplicate_key_is_refused(tmp_path: Path) -> None:
    text = (EXAMPLES / "code_review_runs" / "cr-001-clean.json").read_text()
    log = json.loads(text)
    body = json.dumps(log)[1:]  # repeat overall_status with another value in front
    path = tmp_path / "run.json"
    path.write_text('{"overall_status": "failed", ' + body)
    with pytest.raises(WorkflowError, match="duplicate key 'overall_status'"):
        load_run(path)
