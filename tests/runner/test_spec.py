"""RunSpec: validation, JSON round-trip, references for callables, and a real run from a spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.executor_fns import double

from aieval import Store, run
from aieval.errors import ConfigError
from aieval.runner import RunSpec, run_async, run_spec, run_spec_async
from aieval.scorers import Scorer, exact_match, token_f1

ROWS = [
    {"id": "a", "prompt": "2+2?", "expected": "4", "prediction": "4"},
    {"id": "b", "prompt": "3+3?", "expected": "6", "prediction": "five"},
]


def full_spec() -> RunSpec:
    return RunSpec(
        name="qa",
        dataset="data/qa.jsonl",
        scorers=["exact_match", {"token_f1": {"name": "f1"}}, "tests.support.executor_fns:rouge"],
        provider="openai",
        model="gpt-4o-mini",
        prompt_template="Q: {prompt}",
        system_prompt="Be brief.",
        params={"temperature": 0, "max_tokens": 64},
        base_url="http://127.0.0.1:9/v1",
        concurrency=8,
        retries=1,
        timeout=5.0,
        cache=False,
        store="runs.db",
        resume=True,
        limit=10,
        prediction_field="outputs.text",
        pass_threshold=0.7,
        metadata={"team": "search"},
        workflow="workflows/triage.yaml",
        profile="B",
        telemetry=False,
        enforce_hard_gates=False,
        run_id="r-1",
        executor="ray",
        ray_address="ray://head:10001",
    )


def test_every_field_survives_a_json_round_trip() -> None:
    spec = full_spec()
    text = spec.model_dump_json()
    assert RunSpec.model_validate_json(text) == spec
    assert RunSpec.parse(json.loads(text)) == spec
    assert json.loads(text)["execution"]["ray_address"] == "ray://head:10001"


def test_defaults_match_run() -> None:
    spec = RunSpec(name="qa", dataset=ROWS)
    target, scoring, execution = spec.target, spec.scoring, spec.execution
    assert (execution.concurrency, target.retries, target.timeout, target.cache) == (
        16,
        3,
        60.0,
        True,
    )
    assert (spec.storage.store, spec.storage.resume, scoring.pass_threshold) == (True, None, 0.5)
    assert (execution.executor, execution.ray_address, scoring.enforce_hard_gates) == (
        "local",
        None,
        True,
    )


@pytest.mark.parametrize(
    ("data", "field"),
    [
        pytest.param(
            {"name": "qa", "dataset": "d.jsonl", "concurency": 4}, "concurency", id="typo"
        ),
        pytest.param(
            {"name": "qa", "dataset": "d.jsonl", "concurrency": 0}, "concurrency", id="bound"
        ),
        pytest.param({"name": "", "dataset": "d.jsonl"}, "name", id="empty-name"),
        pytest.param({"name": "qa"}, "dataset", id="missing-dataset"),
        pytest.param({"name": "qa", "dataset": "d", "executor": "dask"}, "executor", id="executor"),
        pytest.param(
            {"name": "qa", "dataset": "d", "scorers": [{"a": {}, "b": {}}]}, "scorers", id="scorer"
        ),
    ],
)
def test_bad_fields_are_named(data: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=rf"^spec\.json: .*{field}"):
        RunSpec.parse(data, source="spec.json")


def test_callables_become_import_references(tmp_path: Path) -> None:
    custom = Scorer(double)
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    result = run(
        name="qa",
        dataset=data,
        scorers=[exact_match, "token_f1", custom],
        target=double,
        store=tmp_path / "runs.db",
    )
    with Store(tmp_path / "runs.db") as store:
        spec = RunSpec.of_run(store.get_run(result.id))
    assert spec.target.function == "tests.support.executor_fns:double"
    assert spec.scoring.scorers == [
        "exact_match",
        "token_f1",
        "tests.support.executor_fns:double",
    ]
    assert (spec.dataset, spec.storage.store) == (str(data), str(tmp_path / "runs.db"))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        pytest.param({"target": lambda example: "x"}, "target", id="lambda-target"),
        pytest.param({"scorers": [lambda p, e: 1.0]}, r"scorers\[0\]", id="lambda-scorer"),
        pytest.param(
            {"scorers": [token_f1.with_options(case_sensitive=True)]},
            r"scorers\[0\]",
            id="bound-options",
        ),
        pytest.param({"scorers": [Scorer(double, name="renamed")]}, r"scorers\[0\]", id="renamed"),
    ],
)
def test_what_cannot_be_serialised_is_named_in_the_stored_run(
    kwargs: dict[str, object], field: str, tmp_path: Path
) -> None:
    settings: dict[str, object] = {"scorers": [exact_match], **kwargs}
    result = run(name="qa", dataset=ROWS, store=tmp_path / "runs.db", **settings)  # type: ignore[arg-type]
    with Store(tmp_path / "runs.db") as store:
        row = store.get_run(result.id)
    with pytest.raises(ConfigError, match=rf"stored spec is incomplete \(.*{field}: "):
        RunSpec.of_run(row)


def test_a_bad_reference_names_the_field() -> None:
    spec = RunSpec(name="qa", dataset=ROWS, scorers=["no_such_module_xyz:scorer"], store=False)
    with pytest.raises(ConfigError, match=r"^scorers\[0\]: cannot import"):
        run_spec(spec)


async def test_a_run_from_a_json_spec_matches_the_direct_run(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    spec = RunSpec(
        name="qa",
        dataset=ROWS,
        scorers=["exact_match", {"token_f1": {"name": "f1"}}],
        store=str(db),
    )
    shipped = RunSpec.model_validate_json(spec.model_dump_json())
    from_spec = await run_spec_async(shipped)
    direct = await run_async(
        name="qa",
        dataset=ROWS,
        scorers=[exact_match, token_f1.with_options(name="f1")],
        store=False,
    )
    assert from_spec.metrics == direct.metrics == {"exact_match": 0.5, "f1": 0.5}
    assert db.is_file()
