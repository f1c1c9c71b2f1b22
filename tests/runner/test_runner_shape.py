"""The runner's shape: its modules, its one-way dependency on evaluators, and its specs."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from tests.runner.test_never_silent import FailingStore
from tests.support.modules import imported_modules

import aieval.runner
from aieval import Store, run
from aieval._plugins import BUILTIN
from aieval.errors import ConfigError, StoreError
from aieval.runner import RunSpec, SampleEvaluator, parse_eval, run_spec
from aieval.scorers import exact_match

RUNNER = Path(aieval.runner.__file__).parent
ROWS = [
    {"id": f"r{i}", "prompt": f"q{i}", "expected": "YES", "prediction": "YES" if i % 3 else "no"}
    for i in range(9)
]


def test_no_runner_module_imports_workflows() -> None:
    files = sorted(RUNNER.glob("*.py"))
    assert len(files) > 10
    offenders = {
        f.name: sorted(m for m in imported_modules(f) if m.startswith("aieval.workflows"))
        for f in files
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_a_plain_run_never_loads_workflows(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        from aieval.runner import run
        from aieval.scorers import exact_match
        rows = [{"prompt": "q", "expected": "a", "prediction": "a"}]
        assert run(name="plain", dataset=rows, scorers=[exact_match], store=False).ok
        print(sorted(m for m in sys.modules if m.startswith("aieval.workflows")))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_built_in_plugins_are_the_packages_entry_points() -> None:
    # the runner knows the workflow grader by its entry-point name only; the fallback table
    # for source trees must say exactly what the package declares
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    declared = pyproject["project"]["entry-points"]
    assert {group: declared[group] for group in BUILTIN} == BUILTIN
    assert BUILTIN["aieval.evaluators"]["workflow"] == "aieval.workflows._evaluator:factory"


def test_a_third_party_evaluator_grades_each_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BUILTIN["aieval.evaluators"], "shout", "tests.support.evaluators:factory")
    result = run(
        name="shout",
        dataset=ROWS,
        scorers=[exact_match],
        evaluator="shout",
        profile="loud",
        store=False,
    )
    graded = {s.id: (s.verdict.passed, s.verdict.grade) for s in result.samples}
    shouted = {r["id"]: r["prediction"] == "YES" for r in ROWS}
    assert graded == {k: (ok, "A" if ok else "F") for k, ok in shouted.items()}
    assert {s.verdict.grader for s in result.samples} == {"shout"}
    assert [s.passed for s in result.samples] == list(shouted.values())


def test_an_evaluator_grading_through_sample_extra_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # its entries would be dropped without a word: the run refuses it, naming the way now
    monkeypatch.setitem(BUILTIN["aieval.evaluators"], "old", "tests.support.evaluators:old_factory")
    with pytest.raises(ConfigError, match=r"evaluator 'old': sample_extra\(\) is no longer"):
        run(name="old", dataset=ROWS, scorers=[exact_match], evaluator="old", store=False)


def test_the_evaluator_protocol_grades_only_through_its_grader() -> None:
    assert not hasattr(SampleEvaluator, "sample_extra") and hasattr(SampleEvaluator, "grader")


def test_an_unknown_evaluator_is_named_with_the_installed_ones() -> None:
    with pytest.raises(ConfigError, match=r"^evaluator: no evaluator named 'nope'.*workflow"):
        run(name="x", dataset=ROWS, scorers=[exact_match], evaluator="nope", store=False)


def test_scorer_mappings_work_in_run_as_in_eval_files() -> None:
    result = run(
        name="m",
        dataset=ROWS,
        scorers=[{"token_f1": {"name": "f1"}}, "exact_match"],
        store=False,
    )
    assert set(result.metrics) == {"f1", "exact_match"}


def test_the_run_stores_its_spec_without_credentials(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    result = run(
        name="stored",
        dataset=data,
        scorers=[exact_match, {"token_f1": {"name": "f1"}}],
        store=tmp_path / "s.db",
        params={"api_key": "sk-never-stored-123"},
        metadata={"team": "qa"},
    )
    row = Store(tmp_path / "s.db").get_run(result.id)
    spec = RunSpec.parse(row.config["spec"])
    assert spec.dataset == str(data) and spec.scoring.scorers == [
        "exact_match",
        {"token_f1": {"name": "f1"}},
    ]
    assert spec.metadata == {"team": "qa"} and spec.storage.store == str(tmp_path / "s.db")
    assert "sk-never-stored-123" not in json.dumps(row.config)
    assert row.config["spec_incomplete"] == {
        "target.params.api_key": "credentials are never stored; give them again"
    }
    with pytest.raises(ConfigError, match=r"target\.params\.api_key: credentials are never stored"):
        RunSpec.of_run(row)


def test_what_a_spec_cannot_hold_is_named_in_the_stored_run(tmp_path: Path) -> None:
    result = run(
        name="live",
        dataset=ROWS,
        scorers=[lambda prediction, expected: 1.0],
        store=tmp_path / "s.db",
    )
    config = Store(tmp_path / "s.db").get_run(result.id).config
    assert set(config["spec_incomplete"]) == {"scorers[0]", "dataset"}
    assert "cannot be referenced by import path" in config["spec_incomplete"]["scorers[0]"]
    assert config["spec"]["dataset"] == "<rows>"


def test_a_stored_spec_resumes_its_run(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(
        "".join(json.dumps({**r, "id": f"s{i}"}) + "\n" for i, r in enumerate(ROWS * 20))
    )
    spec = RunSpec(name="resumable", dataset=str(data), scorers=["exact_match"], concurrency=2)
    store = FailingStore(tmp_path / "s.db")
    store.room = 50
    with pytest.raises(StoreError):
        run_spec(spec, store=store)
    (row,) = store.list_runs()
    again = RunSpec.of_run(row)
    assert again.storage.resume == row.id and again.scoring.scorers == ["exact_match"]
    store.room = 10**9
    result = run_spec(again, store=store)
    assert result.id == row.id and result.status == "completed"
    assert store.count_samples(row.id) == len(ROWS) * 20


def test_an_eval_file_makes_one_spec_per_model(tmp_path: Path) -> None:
    (tmp_path / "extra.py").write_text("from aieval import scorer\n")
    config = parse_eval(
        {
            "name": "multi",
            "dataset": {"path": "rows.jsonl", "limit": 5},
            "models": ["a", "b"],
            "scorers": ["exact_match", {"token_f1": {"name": "f1"}}],
            "imports": ["extra.py"],
            "settings": {"concurrency": 3, "max_error_rate": 0.2},
        },
        base_dir=tmp_path,
    )
    specs = config.specs(store="runs.db", limit=2)
    assert [s.target.model for s in specs] == ["a", "b"]
    first = specs[0]
    assert first.dataset == str(tmp_path / "rows.jsonl") and first.limit == 2
    assert first.scoring.imports == [str(tmp_path / "extra.py")]
    assert (first.execution.concurrency, first.scoring.max_error_rate) == (3, 0.2)
    assert first.storage.store == "runs.db"
    assert RunSpec.model_validate_json(first.model_dump_json()) == first
    with pytest.raises(ConfigError, match="run_id= needs one run"):
        config.specs(run_id="r-1")
    assert {s.execution.executor for s in specs} == {"local"}
    remote = config.specs(executor="ray", ray_address="ray://head:10001")
    assert [(s.execution.executor, s.execution.ray_address) for s in remote] == [
        ("ray", "ray://head:10001")
    ] * 2


def test_eval_file_settings_choose_the_executor() -> None:
    base = {"name": "e", "dataset": "d.jsonl", "scorers": ["exact_match"]}
    ray = parse_eval({**base, "settings": {"executor": "ray", "ray_address": "auto"}})
    (spec,) = ray.specs()
    assert (spec.execution.executor, spec.execution.ray_address) == ("ray", "auto")
    (local,) = ray.specs(executor="local")  # --executor local leaves the file's address aside
    assert (local.execution.executor, local.execution.ray_address) == ("local", None)
    with pytest.raises(ConfigError, match=r"settings.*ray_address applies to executor: ray"):
        parse_eval({**base, "settings": {"ray_address": "auto"}}, source="e.yaml")
    with pytest.raises(ConfigError, match=r"^e\.yaml: settings\.executor"):
        parse_eval({**base, "settings": {"executor": "dask"}}, source="e.yaml")
