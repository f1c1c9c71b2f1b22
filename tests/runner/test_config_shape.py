"""One configuration shape: an eval file's settings are the run spec's fields, run()'s settings
are validated by the spec, and ``grader`` is an eval-file key like the others."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from aieval import Store, run
from aieval.errors import ConfigError
from aieval.runner import (
    EvalSettings,
    ExecutionSpec,
    RunSpec,
    ScoringSpec,
    TargetSpec,
    check_eval,
    load_eval,
    run_eval,
)

ROWS = [
    {"id": "a", "prompt": "2+2?", "expected": "4", "prediction": "4"},
    {"id": "b", "prompt": "3+3?", "expected": "6", "prediction": "five"},
]

#: Where each eval-file setting lives in the spec.
_HOME: dict[str, tuple[type[Any], str]] = {
    **{
        key: (ExecutionSpec, key) for key in ("concurrency", "telemetry", "executor", "ray_address")
    },
    **{key: (TargetSpec, key) for key in ("retries", "cache", "timeout", "prices")},
    **{key: (ScoringSpec, key) for key in ("pass_threshold", "max_error_rate", "min_pass_rate")},
    "epochs": (RunSpec, "epochs"),
    "min": (ScoringSpec, "min_scores"),
}


def test_each_setting_is_the_spec_field_of_its_name() -> None:
    assert set(EvalSettings.model_fields) == set(_HOME)
    for key, (sub, name) in _HOME.items():
        ours, theirs = EvalSettings.model_fields[key], sub.model_fields[name]
        assert ours.annotation == theirs.annotation, key
        assert ours.get_default(call_default_factory=True) == theirs.get_default(
            call_default_factory=True
        ), key
        assert ours.metadata == theirs.metadata, key  # bounds and checks


def write_eval(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    path = tmp_path / "e.yaml"
    path.write_text(f"name: shape\ndataset: rows.jsonl\nscorers: [exact_match]\n{extra}")
    return path


def test_an_eval_file_builds_the_spec_of_the_same_run_keywords(tmp_path: Path) -> None:
    path = write_eval(
        tmp_path,
        "grader: threshold\n"
        "settings: {concurrency: 3, pass_threshold: 0.6, min: {exact_match: 0.4}, epochs: 1}\n",
    )
    (spec,) = load_eval(path).specs(store=False)
    assert spec.scoring.grader == "threshold"
    assert spec.scoring.min_scores == {"exact_match": 0.4}
    (result,) = run_eval(load_eval(path), store=False)
    direct = run(
        name="shape",
        dataset=tmp_path / "rows.jsonl",
        scorers=["exact_match"],
        grader="threshold",
        concurrency=3,
        pass_threshold=0.6,
        min_scores={"exact_match": 0.4},
        store=False,
    )
    assert result.metrics == direct.metrics == {"exact_match": 0.5}
    assert result.missed_minimums == direct.missed_minimums == []
    # what the file leaves out is the spec's default, not a second copy of it
    assert (spec.target.retries, spec.target.timeout) == (
        RunSpec(name="x", dataset="d").target.retries,
        RunSpec(name="x", dataset="d").target.timeout,
    )


def test_an_unknown_grader_in_an_eval_file_is_refused_before_it_runs(tmp_path: Path) -> None:
    config = load_eval(write_eval(tmp_path, "grader: no_such_grader\n"))
    named = rf"^{re.escape(str(config.source.path))}: grader: no grader named 'no_such_grader'"
    with pytest.raises(ConfigError, match=named):
        check_eval(config)
    with pytest.raises(ConfigError, match=named):
        run_eval(config, store=tmp_path / "runs.db")
    assert not (tmp_path / "runs.db").exists() or Store(tmp_path / "runs.db").list_runs() == []


def test_flags_override_the_file_through_replace(tmp_path: Path) -> None:
    config = load_eval(write_eval(tmp_path, "settings: {concurrency: 3, executor: ray,"
                                            " ray_address: 'auto'}\n"))  # fmt: skip
    (spec,) = config.specs(concurrency=5, executor="local", limit=1)
    assert (spec.execution.concurrency, spec.execution.executor, spec.limit) == (5, "local", 1)
    assert spec.execution.ray_address is None  # the file's address goes with its executor
    (kept,) = config.specs(concurrency=None)
    assert (kept.execution.concurrency, kept.execution.ray_address) == (3, "auto")
    with pytest.raises(ConfigError, match=r"options over its settings: concurrency: "):
        config.specs(concurrency=0)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        pytest.param(
            {"concurency": 4},
            r"^run\(\): concurency: not a run setting; did you mean "
            r"concurrency\?",
            id="typo",
        ),
        pytest.param({"scoring": {}}, r"^run\(\): scoring: not a run setting", id="sub-spec"),
        pytest.param({"retries": -1}, r"^run\(\): retries: ", id="bound"),
        pytest.param({"grader": "nope"}, r"^grader: no grader named 'nope'", id="grader"),
    ],
)
def test_run_settings_are_validated_by_the_spec(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run(name="shape", dataset=ROWS, scorers=["exact_match"], store=False, **settings)


def test_the_old_settings_class_name_still_works_with_a_warning() -> None:
    import aieval.runner

    with pytest.warns(DeprecationWarning, match="EvalSettings"):
        old = aieval.runner.SettingsConfig  # type: ignore[attr-defined]
    assert old is EvalSettings
    assert old(concurrency=3).concurrency == 3
