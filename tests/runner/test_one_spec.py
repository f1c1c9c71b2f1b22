"""One run specification: run()'s keywords, eval files and stored runs build the same RunSpec."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.runner.test_never_silent import FailingStore
from tests.support.openai_server import OpenAIServer

from aieval import Store, run
from aieval.errors import ConfigError, StoreError
from aieval.runner import (
    ExecutionSpec,
    RunSpec,
    ScoringSpec,
    StorageSpec,
    TargetSpec,
    parse_eval,
    run_spec,
)
from aieval.scorers import exact_match

ROWS = [
    {"id": f"r{i}", "prompt": f"q{i}", "expected": "YES", "prediction": "YES" if i % 3 else "no"}
    for i in range(30)
]


def write_rows(path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def test_flat_keywords_and_sub_specs_are_one_spec() -> None:
    flat = RunSpec(
        name="qa",
        dataset="d.jsonl",
        scorers=["exact_match"],
        provider="openai",
        model="m",
        params={"temperature": 0},
        concurrency=4,
        executor="ray",
        ray_address="auto",
        store="runs.db",
        resume=True,
        pass_threshold=0.7,
    )
    nested = RunSpec(
        name="qa",
        dataset="d.jsonl",
        target=TargetSpec(provider="openai", model="m", params={"temperature": 0}),
        scoring=ScoringSpec(scorers=["exact_match"], pass_threshold=0.7),
        execution=ExecutionSpec(executor="ray", ray_address="auto", concurrency=4),
        storage=StorageSpec(store="runs.db", resume=True),
    )
    assert flat == nested
    assert RunSpec.model_validate_json(flat.model_dump_json()) == nested
    assert flat.replace(concurrency=4, pass_threshold=0.7) == flat
    assert set(json.loads(flat.model_dump_json())) == {
        "name", "dataset", "limit", "epochs", "prediction_field", "metadata",
        "target", "scoring", "execution", "storage",
    }  # fmt: skip
    # the Ray address lives in the execution sub-spec only
    assert flat.execution.ray_address == "auto" and "ray_address" not in flat.model_dump()
    # a string target is the callable's import path
    assert RunSpec(name="t", dataset="d", target="pkg.mod:fn").target.function == "pkg.mod:fn"


def test_replace_routes_keywords_to_their_sub_spec() -> None:
    spec = RunSpec(name="qa", dataset="d.jsonl", scorers=["exact_match"])
    changed = spec.replace(concurrency=2, resume="r-1", model="m", target="pkg.mod:fn", limit=3)
    assert changed.execution.concurrency == 2 and changed.storage.resume == "r-1"
    assert (changed.target.model, changed.target.function, changed.limit) == ("m", "pkg.mod:fn", 3)
    assert spec.execution.concurrency == 16  # frozen: the original is unchanged
    with pytest.raises(ConfigError, match=r"^concurency: not a run setting"):
        spec.replace(concurency=2)


def test_replace_validates_what_it_changes() -> None:
    """Overrides (command-line flags among them) are validated as the spec is."""
    spec = RunSpec(name="qa", dataset=ROWS, scorers=["exact_match"])
    with pytest.raises(ConfigError, match=r"^<run spec>: concurrency: .*greater than or equal"):
        spec.replace(concurrency=0)
    with pytest.raises(ConfigError, match=r"^<run spec>: min_pass_rate: .*between 0 and 1"):
        spec.replace(min_pass_rate=1.5)
    with pytest.raises(ConfigError, match=r"^<run spec>: executor: "):
        spec.replace(executor="dask")
    changed = spec.replace(pass_threshold="0.75", epochs=2)
    assert (changed.scoring.pass_threshold, changed.epochs) == (0.75, 2)
    assert changed.dataset is spec.dataset  # inline rows are kept, not copied


def test_sub_spec_errors_name_their_path() -> None:
    with pytest.raises(ConfigError, match=r"^spec\.json: execution\.concurrency: "):
        RunSpec.parse({"name": "qa", "dataset": "d", "concurrency": 0}, source="spec.json")
    with pytest.raises(ConfigError, match=r"^spec\.json: target\.retries: "):
        RunSpec.parse({"name": "qa", "dataset": "d", "target": {"retries": -1}}, source="spec.json")
    with pytest.raises(ConfigError, match=r"^spec\.json: scoring\.scorer: "):
        RunSpec.parse({"name": "qa", "dataset": "d", "scoring": {"scorer": []}}, source="spec.json")


def test_a_setting_given_flat_and_nested_with_two_values_is_refused() -> None:
    both = {"name": "qa", "dataset": "d", "concurrency": 4, "execution": {"concurrency": 8}}
    with pytest.raises(
        ConfigError,
        match=r"'concurrency' is given twice, as concurrency=4 and execution\.concurrency=8",
    ):
        RunSpec.parse(both)
    same = {**both, "execution": {"concurrency": 4}}
    assert RunSpec.parse(same).execution.concurrency == 4
    from aieval.runner import ExecutionSpec

    # a sub-spec object's defaults are not a second value
    assert RunSpec(name="qa", dataset="d", concurrency=2, execution=ExecutionSpec()).execution == (
        ExecutionSpec(concurrency=2)
    )


def test_run_keywords_and_an_eval_file_build_the_same_spec(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    data = write_rows(tmp_path / "rows.jsonl")
    db = str(tmp_path / "runs.db")
    # the seed's call, verbatim, plus the settings the eval file below sets
    result = run(
        name="qa",
        dataset=data,
        scorers=[exact_match, {"token_f1": {"name": "f1"}}],
        provider="openai-compatible",
        model="m",
        base_url=openai_server.base_url,
        prompt_template="Q: {prompt}",
        params={"temperature": 0},
        concurrency=3,
        max_error_rate=0.2,
        store=db,
        run_id="r-1",
    )
    row = Store(db).get_run(result.id)
    assert "spec_incomplete" not in row.config
    by_keywords = RunSpec.parse(row.config["spec"])
    config = parse_eval(
        {
            "name": "qa",
            "dataset": "rows.jsonl",
            "target": {
                "provider": "openai-compatible",
                "model": "m",
                "base_url": openai_server.base_url,
                "prompt": "Q: {prompt}",
                "params": {"temperature": 0},
            },
            "scorers": ["exact_match", {"token_f1": {"name": "f1"}}],
            "settings": {"concurrency": 3, "max_error_rate": 0.2},
        },
        base_dir=tmp_path,
    )
    (from_file,) = config.specs(store=db, run_id="r-1")
    assert from_file == by_keywords
    assert RunSpec.model_validate_json(from_file.model_dump_json()) == by_keywords
    assert by_keywords.target.prompt_template == "Q: {prompt}"
    assert by_keywords.execution.concurrency == 3 and by_keywords.scoring.max_error_rate == 0.2


def test_a_run_stores_the_spec_its_keywords_build(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "rows.jsonl")
    db = tmp_path / "runs.db"
    result = run(name="qa", dataset=data, scorers=["exact_match"], store=db, concurrency=2)
    stored = RunSpec.parse(Store(db).get_run(result.id).config["spec"])
    expected = RunSpec(
        name="qa", dataset=str(data), scorers=["exact_match"], store=str(db), concurrency=2
    )
    assert stored == expected
    # running the stored spec again gives the same numbers
    again = run_spec(stored)
    assert again.metrics == result.metrics and again.pass_rate == result.pass_rate


#: A run's spec as versions before the nested spec stored it: every keyword at the top.
def flat_stored_spec(data: Path, db: Path) -> dict[str, Any]:
    return {
        "name": "old", "dataset": str(data), "scorers": ["exact_match"], "provider": None,
        "model": None, "target": None, "prompt_template": None, "system_prompt": None,
        "params": {}, "base_url": None, "api_key_env": None, "concurrency": 2, "retries": 3,
        "timeout": 60.0, "cache": True, "store": str(db), "resume": None, "limit": None,
        "prediction_field": None, "pass_threshold": 0.5, "metadata": {}, "workflow": None,
        "profile": None, "evaluator": None, "imports": [], "telemetry": None,
        "enforce_hard_gates": True, "run_id": None, "max_error_rate": 0.0,
        "executor": "local", "ray_address": None, "prices": {},
    }  # fmt: skip


def interrupted_run(tmp_path: Path) -> tuple[FailingStore, str]:
    """A run stopped by a full store after some samples, its spec stored in the old flat form."""
    data = write_rows(tmp_path / "rows.jsonl")
    store = FailingStore(tmp_path / "s.db")
    store.room = 12
    with pytest.raises(StoreError):
        run(name="old", dataset=data, scorers=["exact_match"], store=store, concurrency=2)
    (row,) = store.list_runs()
    config = {**row.config, "spec": flat_stored_spec(data, tmp_path / "s.db")}
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("UPDATE runs SET config = ? WHERE id = ?", (json.dumps(config), row.id))
    store.room = 10**9
    return store, row.id


def test_a_flat_spec_stored_by_an_earlier_version_resumes(tmp_path: Path) -> None:
    store, run_id = interrupted_run(tmp_path)
    row = store.get_run(run_id)
    assert "execution" not in row.config["spec"]
    spec = RunSpec.of_run(row)
    assert spec.execution.concurrency == 2 and spec.storage.resume == run_id
    assert spec.scoring.scorers == ["exact_match"] and spec.storage.run_id is None
    done_before = store.count_samples(run_id)
    assert 0 < done_before < len(ROWS)
    result = run_spec(spec, store=store)
    assert result.id == run_id and result.status == "completed"
    assert store.count_samples(run_id) == len(ROWS)


def test_resume_still_refuses_a_changed_spec(tmp_path: Path) -> None:
    store, run_id = interrupted_run(tmp_path)
    spec = RunSpec.of_run(store.get_run(run_id))
    with pytest.raises(ConfigError, match=r"configured differently \(pass_threshold: 0\.5 then"):
        run_spec(spec.replace(pass_threshold=0.9), store=store)
    with pytest.raises(ConfigError, match=r"configured differently \(scorers: "):
        run_spec(spec.replace(scorers=["token_f1"]), store=store)
    assert store.get_run(run_id).status != "completed"


def test_one_resolution_of_scorer_entries(tmp_path: Path) -> None:
    """Names, objects, references and eval-file mappings resolve the same way everywhere."""
    data = write_rows(tmp_path / "rows.jsonl")
    entries: list[Any] = [
        "exact_match",
        {"token_f1": {"name": "f1"}},
        "tests.support.ray_fns:base_on_base",
    ]
    spec = RunSpec(name="qa", dataset=str(data), scorers=entries, store=False)
    by_spec = run_spec(spec)
    by_keywords = run(name="qa", dataset=data, scorers=entries, store=False)
    assert by_spec.metrics == by_keywords.metrics
    assert set(by_spec.metrics) == {"exact_match", "f1", "base_on_base"}
    assert by_spec.metrics["base_on_base"] == 1.0 and by_spec.error_count == 0
    config = parse_eval(
        {"name": "qa", "dataset": "rows.jsonl", "scorers": [{"token_f1": {"nme": "x"}}]},
        base_dir=tmp_path,
    )
    # an option the scorer does not take is refused before anything runs, from every entry
    with pytest.raises(ConfigError, match=r"scorers\.token_f1\.nme"):
        run_spec(config.specs(store=False)[0])
    with pytest.raises(ConfigError, match=r"scorers\.token_f1\.nme"):
        run(name="qa", dataset=data, scorers=[{"token_f1": {"nme": "x"}}], store=False)


def test_the_target_sub_spec_reaches_the_provider(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    spec = RunSpec(
        name="served",
        dataset=[{"id": "a", "prompt": "2+2?", "expected": "4"}],
        scorers=["exact_match"],
        provider="openai-compatible",
        model="m",
        base_url=openai_server.base_url,
        prompt_template="Q: {prompt}",
        params={"temperature": 0},
        store=str(tmp_path / "runs.db"),
    )
    result = run_spec(spec)
    assert result.error_count == 0 and result.samples[0].prediction == "echo: Q: 2+2?"
    (request,) = openai_server.requests
    assert request.body["model"] == "m" and request.body["temperature"] == 0
