"""``import_promptfoo`` and ``aieval import promptfoo``: the files written, the report, and
the refusals that name what would otherwise change the evaluation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from aieval.errors import ConfigError
from aieval.migrate import import_promptfoo
from aieval.runner import parse_eval, run_eval

AIEVAL = [sys.executable, "-m", "aieval"]


def _config(folder: Path, doc: dict[str, Any], name: str = "promptfooconfig.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


BASIC: dict[str, Any] = {
    "description": "Support bot",
    "prompts": ["Answer {{name}}: {{question}}"],
    "providers": [
        "openai:gpt-4o-mini",
        {"id": "openai:chat:gpt-4o", "config": {"temperature": 0.2}},
        "anthropic:messages:claude-3-5-haiku-latest",
        "file://my_provider.py",
    ],
    "defaultTest": {
        "vars": {"name": "Ann"},
        "assert": [
            {"type": "not-icontains", "value": "as an AI"},
            {"type": "icontains", "value": "{{name}}"},
        ],
    },
    "tests": [
        {
            "description": "refund",
            "vars": {"question": "Can I get a refund?"},
            "assert": [
                {"type": "contains", "value": "refund", "metric": "mentions"},
                {"type": "javascript", "value": "output.length < 200"},
            ],
        },
        {
            "vars": {"question": "Hi", "name": "Bo"},
            "threshold": 0.5,
            "assert": [{"type": "regex", "value": "^Hi"}],
        },
        {"vars": {"question": "Bye"}},
    ],
}


def test_the_import_writes_evals_dataset_stubs_and_report(tmp_path: Path) -> None:
    config = _config(tmp_path / "pf", BASIC)
    result = import_promptfoo(config, tmp_path / "out")
    out = tmp_path / "out"
    # one eval file per prompt x provider settings; models of the same settings share one
    assert sorted(p.name for p in result.eval_files) == [
        "eval-p1-anthropic.yaml",
        "eval-p1-openai1.yaml",
        "eval-p1-openai2.yaml",
    ]
    docs = {p.name: yaml.safe_load(p.read_text(encoding="utf-8")) for p in result.eval_files}
    targets = sorted(
        (d["target"]["provider"], d["target"]["model"], json.dumps(d["target"].get("params")))
        for d in docs.values()
    )
    assert targets == [
        ("anthropic", "claude-3-5-haiku-latest", "null"),
        ("openai", "gpt-4o", '{"temperature": 0.2}'),
        ("openai", "gpt-4o-mini", "null"),
    ]
    for doc in docs.values():
        assert doc["target"]["prompt"] == "Answer {vars[name]}: {vars[question]}"
        assert doc["default_checks"] == [{"icontains": {"value": "as an AI", "negate": True}}]
        assert doc["imports"] == ["promptfoo_checks.py"]
        assert doc["dataset"] == "dataset.jsonl"
    rows = _rows(out / "dataset.jsonl")
    # defaultTest's vars are merged and its templated assertion is rendered into each row
    assert [r["id"] for r in rows] == ["1", "2", "3"]
    assert rows[0]["vars"] == {"name": "Ann", "question": "Can I get a refund?"}
    assert rows[0]["checks"] == [
        {"icontains": {"value": "Ann"}},
        {"contains": {"value": "refund", "name": "mentions"}},
        "pf_javascript_1",
    ]
    assert rows[0]["metadata"] == {"promptfoo_test": 1, "description": "refund"}
    assert rows[1]["checks"] == [
        {"icontains": {"value": "Bo"}},
        {"regex": {"pattern": "(?a)^Hi"}},
        "pf_threshold_2",
    ]
    stubs = (out / "promptfoo_checks.py").read_text(encoding="utf-8")
    assert "output.length < 200" in stubs and "NotImplementedError" in stubs
    report = (out / "import-report.md").read_text(encoding="utf-8")
    assert report == result.text()
    assert "file://my_provider.py" in report and "pf_threshold_2" in report
    assert not result.complete


def test_a_test_without_assertions_is_left_out_and_reported(tmp_path: Path) -> None:
    doc = {
        "prompts": ["{{q}}"],
        "providers": ["openai:gpt-4o-mini"],
        "tests": [{"vars": {"q": "a"}, "assert": [{"type": "is-json"}]}, {"vars": {"q": "b"}}],
    }
    result = import_promptfoo(_config(tmp_path / "pf", doc), tmp_path / "out")
    assert [r["id"] for r in _rows(result.dataset)] == ["1"]
    assert [u.promptfoo for u in result.unmapped] == ["a test without assertions"]
    doc = yaml.safe_load(result.eval_files[0].read_text(encoding="utf-8"))
    assert doc["scorers"] == []  # the rows' own checks score


def test_a_stub_fails_its_samples_naming_the_promptfoo_assertion(tmp_path: Path) -> None:
    asserts = tmp_path / "asserts.yaml"
    asserts.write_text(
        yaml.safe_dump(
            [
                {"type": "icontains", "value": "hello"},
                {"type": "javascript", "value": "output.length > 3"},
            ]
        ),
        encoding="utf-8",
    )
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(["Hello there", {"output": "bye"}]), encoding="utf-8")
    result = import_promptfoo(asserts, tmp_path / "out", model_outputs=outputs)
    (eval_file,) = result.eval_files
    doc = yaml.safe_load(eval_file.read_text(encoding="utf-8"))
    assert doc["scorers"] == [{"icontains": {"value": "hello"}}, "pf_javascript_1"]
    assert [r["prediction"] for r in _rows(result.dataset)] == ["Hello there", "bye"]
    config = parse_eval(doc, source=str(eval_file), base_dir=eval_file.parent)
    (run,) = run_eval(config, store=False)
    for sample in run.samples:
        assert sample.passed is False
        error = sample.scores["pf_javascript_1"].error or ""
        assert "NotImplementedError" in error and "output.length > 3" in error


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"prompts": ["{% if x %}A{% endif %}"]}, "prompts[0], line 1: nunjucks tag"),
        ({"prompts": ["Hi {{ name | upper }}"]}, "'{{ name | upper }}' is not a plain variable"),
        ({"scenarios": []}, "scenarios"),
        ({"tests": [{"vars": {"name": ["a", "b"]}, "assert": []}]}, "one test per value"),
        ({"tests": [{"vars": {}, "assert": [{"type": "contains", "value": "x"}]}]}, "does not set"),
        ({"tests": [{"vars": {"name": True}, "assert": []}]}, "prints differently"),
        ({"tests": [{"vars": {"name": "a"}, "options": {"prefix": "P: "}}]}, "options ['prefix']"),
        ({"tests": [{"vars": {"name": "a"}, "provider": "openai:gpt-4o"}]}, "keys ['provider']"),
        ({"providers": ["file://p.py", "echo"]}, "none of the providers has an aieval target"),
        ({"tests": [{"vars": {"name": "a"}}]}, "no test has an assertion"),
        ({"prompts": ["file://prompt.py"]}, "file not found"),
        ({"tests": "file://tests.csv"}, "file not found"),
    ],
)
def test_what_would_change_the_evaluation_is_refused_by_name(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    doc = {
        "prompts": ["Hi {{name}}"],
        "providers": ["openai:gpt-4o-mini"],
        "tests": [{"vars": {"name": "a"}, "assert": [{"type": "contains", "value": "a"}]}],
        **change,
    }
    with pytest.raises(ConfigError) as caught:
        import_promptfoo(_config(tmp_path / "pf", doc), tmp_path / "out")
    assert message in str(caught.value)
    assert "promptfooconfig.yaml" in str(caught.value)


def test_prompts_files_split_on_separator_lines_and_vars_read_from_files(tmp_path: Path) -> None:
    folder = tmp_path / "pf"
    folder.mkdir()
    (folder / "prompts.txt").write_text("First {{q}}\n---\nSecond {{q}}\n", encoding="utf-8")
    (folder / "question.txt").write_text("What is {this}?", encoding="utf-8")
    doc = {
        "prompts": ["file://prompts.txt"],
        "providers": ["openai:gpt-4o-mini"],
        "tests": [{"vars": {"q": "file://question.txt"}, "assert": [{"type": "is-json"}]}],
    }
    result = import_promptfoo(_config(folder, doc), tmp_path / "out")
    prompts = [yaml.safe_load(p.read_text())["target"]["prompt"] for p in result.eval_files]
    assert prompts == ["First {vars[q]}", "Second {vars[q]}"]
    (row,) = _rows(result.dataset)
    assert row["vars"] == {"q": "What is {this}?"}
    assert prompts[0].format(vars=row["vars"]) == "First What is {this}?"


def test_an_earlier_import_is_not_overwritten_unless_asked(tmp_path: Path) -> None:
    config = _config(tmp_path / "pf", BASIC)
    import_promptfoo(config, tmp_path / "out")
    with pytest.raises(ConfigError, match=r"already holds .*dataset\.jsonl.*--overwrite"):
        import_promptfoo(config, tmp_path / "out")
    import_promptfoo(config, tmp_path / "out", overwrite=True)


def test_the_command_prints_the_report_and_refuses_with_exit_2(tmp_path: Path) -> None:
    config = _config(tmp_path / "pf", BASIC)
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_DB"}
    done = subprocess.run(
        [*AIEVAL, "import", "promptfoo", str(config), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "## Not mapped" in done.stdout and "pf_javascript_1" in done.stdout
    assert "imported, incomplete" in done.stderr and "aieval run" in done.stderr
    again = subprocess.run(
        [*AIEVAL, "import", "promptfoo", str(config), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert again.returncode == 2
    assert "already holds" in again.stderr and "Traceback" not in again.stderr
