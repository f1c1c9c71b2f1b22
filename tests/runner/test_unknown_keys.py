"""A misspelt key is refused with its path and the nearest known key, in every schema."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from aieval.errors import ConfigError, RubricError
from aieval.grading import load_profile, load_rubric
from aieval.runner import parse_eval

BASE: dict[str, Any] = {"name": "qa", "dataset": "data.jsonl", "scorers": ["exact_match"]}


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        pytest.param(
            {"settings": {"concurency": 4}},
            "settings.concurency: unknown key; did you mean concurrency?",
            id="settings",
        ),
        pytest.param(
            {"dataset": {"pth": "data.jsonl"}},
            "dataset.pth: unknown key; did you mean path?",
            id="dataset",
        ),
        pytest.param(
            {"target": {"provider": "openai", "model": "m", "base_ulr": "x"}},
            "target.base_ulr: unknown key; did you mean base_url?",
            id="target",
        ),
        pytest.param({"profle": "B"}, "profle: unknown key; did you mean profile?", id="top"),
    ],
)
def test_eval_file_key_typos_are_refused_with_the_path(patch: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_eval({**BASE, **patch}, source="qa.yaml")
    assert message in str(caught.value)
    assert "Input should be a valid string" not in str(caught.value)  # the other union branch


def test_cli_prints_the_typo_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "qa.yaml").write_text(yaml.safe_dump({**BASE, "settings": {"concurency": 4}}))
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "run", "qa.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: qa.yaml: settings.concurency: unknown key; did you mean concurrency?"
    )


def rubric(**extra: Any) -> dict[str, Any]:
    criterion = {
        "name": "clarity",
        "scale": [1, 5],
        "weight": 1,
        "definition": "clear",
        "evidence_required": ["a quote"],
        "anchors": {str(i): f"level {i}" for i in range(1, 6)},
    }
    return {"rubric_id": "r", "criteria": [{**criterion, **extra.pop("criterion", {})}], **extra}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(rubric(pass_treshold=80), "'pass_treshold'", id="rubric-top"),
        pytest.param(
            rubric(criterion={"critical_flor": 0.5}), "'critical_flor'", id="rubric-criterion"
        ),
    ],
)
def test_rubric_key_typos_name_the_nearest_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(RubricError) as caught:
        load_rubric(data)
    assert message in str(caught.value) and "did you mean" in str(caught.value)


def test_profile_key_typos_name_the_nearest_key() -> None:
    profile = {
        "id": "x",
        "name": "x",
        "pass_treshold": 80,
        "criteria": [{"name": "c", "weight": 1, "formula_id": "zero_one", "kind": "objective"}],
    }
    with pytest.raises(RubricError, match=r"'pass_treshold'.*did you mean pass_threshold"):
        load_profile(profile)
    with pytest.raises(ConfigError, match="threshold; did you mean pass_threshold"):
        load_profile("B", overrides={"threshold": 80})


def test_scorer_option_typo_is_refused_before_the_run() -> None:
    from aieval.runner import build_scorers

    config = parse_eval({**BASE, "scorers": [{"token_f1": {"case_sensitve": True}}]})
    with pytest.raises(
        ConfigError,
        match=r"scorers.token_f1.case_sensitve: unknown key; "
        r"did you mean case_sensitive\?",
    ):
        build_scorers(config)
    good = parse_eval({**BASE, "scorers": [{"token_f1": {"case_sensitive": True, "name": "f"}}]})
    assert [s.name for s in build_scorers(good)] == ["f"]


def test_llm_judge_option_typo_names_the_nearest_option() -> None:
    from aieval.runner import build_scorers

    config = parse_eval({**BASE, "scorers": [{"llm_judge": {"rubrc": "r", "model": "m"}}]})
    with pytest.raises(
        ConfigError,
        match=r"scorers.llm_judge.rubrc: unknown key; "
        r"did you mean rubric\?",
    ):
        build_scorers(config)
